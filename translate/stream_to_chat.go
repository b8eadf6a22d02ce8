package translate

import "strconv"

// chatStreamWriter writes chat.completion.chunk events: a first chunk with
// the assistant role, content and tool-call fragments (a call's id, type and
// name only in its first fragment, calls numbered from 0), a chunk with the
// finish reason, and a usage chunk with no choices. It does not write
// [DONE]: the ChatStream adds it after the delivery block.
type chatStreamWriter struct {
	streamHead
	// prefix is every chunk up to its delta.
	prefix     []byte
	sentFinish bool
}

func (w *chatStreamWriter) begin(id, model string, created int64, emit Emit) {
	if !w.start(id, model, created) {
		return
	}
	p := append(make([]byte, 0, 128+len(id)+len(model)), `{"id":"chatcmpl-`...)
	p = appendJSONStringBody(p, idSuffix(w.id))
	p = append(p, `","object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, w.created, 10)
	p = appendStringField(p, "model", w.model)
	w.prefix = append(p, `,"choices":[{"index":0,"delta":`...)
	w.send(emit, append(w.chunk(40), `{"role":"assistant","content":""}`...), "")
}

// chunk starts a chunk with room for a delta of about size bytes; the caller
// appends the delta and passes the chunk to send.
func (w *chatStreamWriter) chunk(size int) []byte {
	return append(make([]byte, 0, len(w.prefix)+size+64), w.prefix...)
}

// send finishes a chunk with its finish reason and emits it.
func (w *chatStreamWriter) send(emit Emit, b []byte, finish string) {
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = AppendJSONString(b, finish)
	}
	emit("", append(b, "}]}"...))
}

func (w *chatStreamWriter) text(s string, emit Emit) {
	if w.done || s == "" {
		return
	}
	w.begin("", "", 0, emit)
	b := append(w.chunk(len(s)+16), `{"content":`...)
	b = AppendJSONString(b, s)
	w.send(emit, append(b, '}'), "")
}

func (w *chatStreamWriter) toolCall(key int, id, name string, emit Emit) {
	if w.done || w.callIndex(key) >= 0 {
		return
	}
	w.begin("", "", 0, emit)
	index := len(w.calls)
	w.calls = append(w.calls, callKey{key: key, index: index})
	b := append(w.chunk(96+len(id)+len(name)), `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"id":`...)
	b = AppendJSONString(b, id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = AppendJSONString(b, name)
	w.send(emit, append(b, `,"arguments":""}}]}`...), "")
}

func (w *chatStreamWriter) toolArgs(key int, s string, emit Emit) {
	index := w.callIndex(key)
	if w.done || index < 0 || s == "" {
		return
	}
	b := append(w.chunk(64+len(s)), `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"function":{"arguments":`...)
	b = AppendJSONString(b, s)
	w.send(emit, append(b, "}}]}"...), "")
}

func (w *chatStreamWriter) endBlock(Emit) {}

func (w *chatStreamWriter) setFinish(reason string, emit Emit) {
	if w.done || w.sentFinish || reason == "" {
		return
	}
	w.begin("", "", 0, emit)
	w.reason, w.sentFinish = reason, true
	w.send(emit, append(w.chunk(2), "{}"...), reason)
}

func (w *chatStreamWriter) finish(emit Emit) {
	if w.done {
		return
	}
	w.begin("", "", 0, emit)
	if !w.sentFinish {
		reason := "stop"
		if len(w.calls) > 0 {
			reason = "tool_calls"
		}
		w.setFinish(reason, emit)
	}
	w.done = true
	if !w.usage.known {
		return
	}
	b := make([]byte, 0, len(w.prefix)+128)
	b = append(b, w.prefix[:len(w.prefix)-len(`[{"index":0,"delta":`)]...)
	b = append(b, `[],"usage":`...)
	b = appendChatUsage(b, w.usage)
	emit("", append(b, '}'))
}
