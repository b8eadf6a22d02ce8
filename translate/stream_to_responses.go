package translate

import "strconv"

// responsesStreamWriter writes responses-shape events: response.created and
// response.in_progress; for a message item output_item.added,
// content_part.added, output_text.delta, then output_text.done,
// content_part.done and output_item.done; for a function call
// output_item.added, function_call_arguments.delta, then
// function_call_arguments.done and output_item.done; and finally
// response.completed (response.incomplete when the output was cut short)
// with the whole response and its usage. Every event carries the next
// sequence_number.
type responsesStreamWriter struct {
	streamHead
	suffix string
	seq    int64
	items  []streamItem
	// open is whether the last item has been added and not yet done.
	open bool
}

// streamItem is an output item: a message with its text, or a function call
// with its arguments.
type streamItem struct {
	call   bool
	callID string
	name   string
	buf    []byte
}

// event starts an event of type typ; the caller appends its members and
// passes the result to send.
func (w *responsesStreamWriter) event(typ string, size int) []byte {
	b := append(make([]byte, 0, 64+size), `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, w.seq, 10)
	w.seq++
	return b
}

func (w *responsesStreamWriter) begin(id, model string, created int64, emit Emit) {
	if !w.start(id, model, created) {
		return
	}
	w.suffix = idSuffix(w.id)
	for _, typ := range [...]string{"response.created", "response.in_progress"} {
		b := append(w.event(typ, 384), `,"response":`...)
		b = w.appendResponse(b, "in_progress", "")
		emit(typ, append(b, '}'))
	}
}

// appendResponse writes the response object with the given status and the
// output items so far.
func (w *responsesStreamWriter) appendResponse(b []byte, status, incompleteReason string) []byte {
	b = append(b, `{"id":"resp_`...)
	b = appendJSONStringBody(b, w.suffix)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, w.created, 10)
	b = appendStringField(b, "status", status)
	b = append(b, `,"error":null`...)
	b = appendIncompleteDetails(b, incompleteReason)
	b = appendStringField(b, "model", w.model)
	b = append(b, `,"output":[`...)
	if status != "in_progress" {
		for i := range w.items {
			b = w.appendItem(appendSep(b), i, "completed")
		}
	}
	b = append(b, `],"usage":`...)
	if status == "in_progress" {
		b = append(b, "null"...)
	} else {
		b = appendResponsesUsage(b, w.usage)
	}
	return append(b, '}')
}

// appendItem writes output item i with the given status.
func (w *responsesStreamWriter) appendItem(b []byte, i int, status string) []byte {
	it := &w.items[i]
	if it.call {
		return appendFunctionCallItem(b, w.suffix, i, status, it.callID, it.name, string(it.buf))
	}
	return appendMessageItem(b, w.suffix, i, status, string(it.buf))
}

// itemRef appends the item_id and output_index members of an event about
// item i.
func (w *responsesStreamWriter) itemRef(b []byte, i int) []byte {
	prefix := "msg"
	if w.items[i].call {
		prefix = "fc"
	}
	b = appendItemID(append(b, `,"item_id":`...), prefix, w.suffix, i)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(i), 10)
}

// addItem ends the open item and adds a new one.
func (w *responsesStreamWriter) addItem(emit Emit, it streamItem) int {
	w.endBlock(emit)
	i := len(w.items)
	w.items = append(w.items, it)
	w.open = true
	b := append(w.event("response.output_item.added", 256), `,"output_index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = w.appendItem(append(b, `,"item":`...), i, "in_progress")
	emit("response.output_item.added", append(b, '}'))
	if !it.call {
		b = w.itemRef(w.event("response.content_part.added", 128), i)
		emit("response.content_part.added", append(b, `,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}`...))
	}
	return i
}

func (w *responsesStreamWriter) text(s string, emit Emit) {
	if w.done || s == "" {
		return
	}
	w.begin("", "", 0, emit)
	if !w.open || w.items[len(w.items)-1].call {
		w.addItem(emit, streamItem{})
	}
	i := len(w.items) - 1
	w.items[i].buf = append(w.items[i].buf, s...)
	b := w.itemRef(w.event("response.output_text.delta", len(s)+128), i)
	b = append(b, `,"content_index":0,"delta":`...)
	b = AppendJSONString(b, s)
	emit("response.output_text.delta", append(b, `,"logprobs":[]}`...))
}

func (w *responsesStreamWriter) toolCall(key int, id, name string, emit Emit) {
	if w.done || w.callIndex(key) >= 0 {
		return
	}
	w.begin("", "", 0, emit)
	i := w.addItem(emit, streamItem{call: true, callID: id, name: name})
	w.calls = append(w.calls, callKey{key: key, index: i})
}

// toolArgs emits an argument fragment under the call's item, even when an
// upstream interleaving parallel calls sends it after that item was done.
func (w *responsesStreamWriter) toolArgs(key int, s string, emit Emit) {
	i := w.callIndex(key)
	if w.done || i < 0 || s == "" {
		return
	}
	w.items[i].buf = append(w.items[i].buf, s...)
	b := w.itemRef(w.event("response.function_call_arguments.delta", len(s)+128), i)
	b = append(b, `,"delta":`...)
	b = AppendJSONString(b, s)
	emit("response.function_call_arguments.delta", append(b, '}'))
}

// endBlock emits the done events of the open item.
func (w *responsesStreamWriter) endBlock(emit Emit) {
	if !w.open || w.done {
		return
	}
	w.open = false
	i := len(w.items) - 1
	it := &w.items[i]
	if it.call {
		b := w.itemRef(w.event("response.function_call_arguments.done", len(it.buf)+128), i)
		b = append(b, `,"arguments":`...)
		b = AppendJSONString(b, string(it.buf))
		emit("response.function_call_arguments.done", append(b, '}'))
	} else {
		b := w.itemRef(w.event("response.output_text.done", len(it.buf)+128), i)
		b = append(b, `,"content_index":0,"text":`...)
		b = AppendJSONString(b, string(it.buf))
		emit("response.output_text.done", append(b, `,"logprobs":[]}`...))
		b = w.itemRef(w.event("response.content_part.done", len(it.buf)+128), i)
		b = append(b, `,"content_index":0,"part":{"type":"output_text","annotations":[],"text":`...)
		b = AppendJSONString(b, string(it.buf))
		emit("response.content_part.done", append(b, "}}"...))
	}
	b := append(w.event("response.output_item.done", len(it.buf)+256), `,"output_index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = w.appendItem(append(b, `,"item":`...), i, "completed")
	emit("response.output_item.done", append(b, '}'))
}

func (w *responsesStreamWriter) setFinish(reason string, _ Emit) {
	if !w.done && reason != "" {
		w.reason = reason
	}
}

func (w *responsesStreamWriter) finish(emit Emit) {
	if w.done {
		return
	}
	w.begin("", "", 0, emit)
	w.endBlock(emit)
	w.done = true
	status, reason := responsesStatusFromChat(w.reason)
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	b := append(w.event(typ, 512), `,"response":`...)
	b = w.appendResponse(b, status, reason)
	emit(typ, append(b, '}'))
}
