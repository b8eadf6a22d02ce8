package translate

import "strconv"

// messagesStreamWriter writes messages-shape events in the order the shape
// defines: message_start, then for each content block content_block_start,
// content_block_delta (text_delta or input_json_delta) and
// content_block_stop, then message_delta with the stop reason and usage, and
// message_stop. Upstreams of the OpenAI shapes report input tokens only at
// the end, so message_start counts none and message_delta carries them, as
// the shape's cumulative usage allows.
type messagesStreamWriter struct {
	streamHead
	blocks int
	// open is whether block blocks-1 has started and not stopped; inText
	// whether that block is text rather than a tool call.
	open   bool
	inText bool
}

func (w *messagesStreamWriter) begin(id, model string, created int64, emit Emit) {
	if !w.start(id, model, created) {
		return
	}
	b := append(make([]byte, 0, 256+len(id)+len(model)), `{"type":"message_start","message":{"id":"msg_`...)
	b = appendJSONStringBody(b, idSuffix(w.id))
	b = append(b, `","type":"message","role":"assistant"`...)
	b = appendStringField(b, "model", w.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{`...)
	b = appendAnthropicInput(b, w.usage)
	emit("message_start", append(b, `,"output_tokens":0}}}`...))
}

// startBlock ends the open block and starts the next one with the given
// content_block JSON.
func (w *messagesStreamWriter) startBlock(emit Emit, contentBlock []byte) int {
	w.endBlock(emit)
	index := w.blocks
	w.blocks++
	b := append(make([]byte, 0, 64+len(contentBlock)), `{"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"content_block":`...)
	b = append(b, contentBlock...)
	emit("content_block_start", append(b, '}'))
	w.open = true
	return index
}

// delta emits a content_block_delta for block index.
func (w *messagesStreamWriter) delta(emit Emit, index int, kind, field, s string) {
	b := append(make([]byte, 0, 96+len(s)), `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, kind...)
	b = append(b, `","`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = AppendJSONString(b, s)
	emit("content_block_delta", append(b, "}}"...))
}

func (w *messagesStreamWriter) text(s string, emit Emit) {
	if w.done || s == "" {
		return
	}
	w.begin("", "", 0, emit)
	if !w.open || !w.inText {
		w.startBlock(emit, []byte(`{"type":"text","text":""}`))
		w.inText = true
	}
	w.delta(emit, w.blocks-1, "text_delta", "text", s)
}

func (w *messagesStreamWriter) toolCall(key int, id, name string, emit Emit) {
	if w.done || w.callIndex(key) >= 0 {
		return
	}
	w.begin("", "", 0, emit)
	cb := append(make([]byte, 0, 64+len(id)+len(name)), `{"type":"tool_use","id":`...)
	cb = AppendJSONString(cb, anthropicToolID(id))
	cb = append(cb, `,"name":`...)
	cb = AppendJSONString(cb, name)
	index := w.startBlock(emit, append(cb, `,"input":{}}`...))
	w.calls = append(w.calls, callKey{key: key, index: index})
	w.inText = false
}

// toolArgs emits an argument fragment. Fragments of a call whose block has
// been closed (an upstream interleaving parallel calls) still name that
// block's index, where the shape's accumulators place them.
func (w *messagesStreamWriter) toolArgs(key int, s string, emit Emit) {
	index := w.callIndex(key)
	if w.done || index < 0 || s == "" {
		return
	}
	w.delta(emit, index, "input_json_delta", "partial_json", s)
}

func (w *messagesStreamWriter) endBlock(emit Emit) {
	if !w.open || w.done {
		return
	}
	w.open = false
	b := append(make([]byte, 0, 48), `{"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(w.blocks-1), 10)
	emit("content_block_stop", append(b, '}'))
}

func (w *messagesStreamWriter) setFinish(reason string, _ Emit) {
	if !w.done && reason != "" {
		w.reason = reason
	}
}

func (w *messagesStreamWriter) finish(emit Emit) {
	if w.done {
		return
	}
	w.begin("", "", 0, emit)
	w.endBlock(emit)
	w.done = true
	reason := w.reason
	if reason == "" && len(w.calls) > 0 {
		reason = "tool_calls"
	}
	b := append(make([]byte, 0, 192), `{"type":"message_delta","delta":{"stop_reason":`...)
	b = AppendJSONString(b, anthropicStopFromChat(reason))
	b = append(b, `,"stop_sequence":null},"usage":`...)
	if w.usage.known {
		b = appendAnthropicUsage(b, w.usage)
	} else {
		// The shape requires usage here; the upstream gave none.
		b = append(b, `{"output_tokens":0}`...)
	}
	emit("message_delta", append(b, '}'))
	emit("message_stop", []byte(`{"type":"message_stop"}`))
}
