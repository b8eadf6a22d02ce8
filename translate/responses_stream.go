package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// ResponsesStream is the ClientStream of a responses-shape client. It
// rewrites the response id and model in every event that carries the
// response object, accumulates the result and usage, and holds back the
// terminal event (response.completed, or response.incomplete or
// response.failed) until Close, which attaches the delivery block at
// response.delivery. When the upstream ended without one, Close finishes the
// open output items and writes a response.completed itself.
type ResponsesStream struct {
	id, model string

	started  bool
	terminal bool
	// failed is set once an error event has been written: it ends the
	// stream, and nothing may follow it.
	failed bool
	// err is the malformed upstream event that broke the stream.
	err      error
	created  int64
	seq      int64
	items    []trackedItem
	held     []byte
	heldType string
	usage    Usage
	result   Result
}

// trackedItem is an output item as the client has seen it so far. Only
// message and function_call items (call set) are tracked; other kinds, such
// as reasoning, are left as the upstream sent them.
type trackedItem struct {
	tracked  bool
	call     bool
	id       string
	callID   string
	name     string
	buf      []byte
	streamed bool
	partOpen bool
	done     bool
}

// NewResponsesStream returns the ClientStream for a responses-shape client.
func NewResponsesStream(id, model string) *ResponsesStream {
	return &ResponsesStream{id: id, model: model, seq: -1}
}

// Event implements ClientStream. An event that is not JSON, or lacks what
// its type needs, is not passed on: it breaks the stream (see Err).
func (s *ResponsesStream) Event(dst []byte, event string, data []byte) []byte {
	if s.err != nil {
		return dst
	}
	if !gjson.ValidBytes(data) {
		s.err = errNotJSON
		return dst
	}
	data = singleLine(data)
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		s.err = errNotObject
		return dst
	}
	typ := root.Get("type").Str
	if typ == "" {
		typ = event
	}
	resp, idx := root.Get("response"), root.Get("output_index")
	// The member each type needs is read once, and checked before anything
	// of the event is taken in.
	var member gjson.Result
	var err error
	switch typ {
	case "response.created", "response.in_progress", "response.queued", "response.completed", "response.incomplete":
		err = wants(typ, "response", resp, gjson.JSON)
	case "response.output_item.added", "response.output_item.done":
		member = root.Get("item")
		err = wantsItem(typ, idx, "item", member, gjson.JSON)
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		member = root.Get("delta")
		err = wantsItem(typ, idx, "delta", member, gjson.String)
	case "response.function_call_arguments.done":
		member = root.Get("arguments")
		err = wantsItem(typ, idx, "arguments", member, gjson.String)
	}
	if err != nil {
		s.err = err
		return dst
	}
	if n := root.Get("sequence_number"); n.Type == gjson.Number && n.Int() > s.seq {
		s.seq = n.Int()
	}
	if resp.IsObject() {
		data = setStrings(data, "response.id", s.id, "response.model", s.model)
		if s.created == 0 {
			s.created = resp.Get("created_at").Int()
		}
	}
	index := int(idx.Int())
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		s.started = true
	case "response.output_item.added":
		s.trackItem(index, member)
	case "response.content_part.added":
		if it := s.item(index); it != nil {
			it.partOpen = true
		}
	case "response.content_part.done":
		if it := s.item(index); it != nil {
			it.partOpen = false
		}
	case "response.output_text.delta", "response.refusal.delta":
		if it := s.item(index); it != nil {
			it.buf = append(it.buf, member.Str...)
			it.streamed = true
		}
	case "response.function_call_arguments.delta":
		if it := s.item(index); it != nil {
			it.buf = append(it.buf, member.Str...)
		}
	case "response.function_call_arguments.done":
		if it := s.item(index); it != nil {
			it.buf = append(it.buf[:0], member.Str...)
		}
	case "response.output_item.done":
		item := member
		it := s.item(index)
		if it == nil {
			it = s.trackItem(index, item)
		}
		if it != nil {
			it.done, it.partOpen = true, false
			if it.call {
				it.buf = append(it.buf[:0], item.Get("arguments").Str...)
			} else if !it.streamed {
				it.buf = append(it.buf, textParts(item.Get("content"))...)
			}
		}
	case "response.completed", "response.incomplete", "response.failed":
		if u := resp.Get("usage"); u.IsObject() {
			s.usage = responsesUsage(u).usage()
		}
		s.result.FinishReason = chatFinishFromResponses(resp.Get("status").Str, resp.Get("incomplete_details.reason").Str, s.calledTools())
		// Held until Close; data may alias the upstream's read buffer.
		s.held = append(s.held[:0], data...)
		s.heldType = typ
		s.terminal = true
		return dst
	case "error":
		s.failed = true
	}
	return AppendSSE(dst, typ, data)
}

// trackItem records an item added at index; nil when the index is unusable.
func (s *ResponsesStream) trackItem(index int, item gjson.Result) *trackedItem {
	if index < 0 || index > 1<<16 {
		return nil
	}
	for len(s.items) <= index {
		s.items = append(s.items, trackedItem{})
	}
	it := &s.items[index]
	typ := item.Get("type").Str
	*it = trackedItem{
		tracked: typ == "message" || typ == "function_call",
		call:    typ == "function_call",
		id:      item.Get("id").Str,
		callID:  item.Get("call_id").Str,
		name:    item.Get("name").Str,
	}
	if it.call {
		it.buf = append(it.buf, item.Get("arguments").Str...)
	}
	return it
}

func (s *ResponsesStream) item(index int) *trackedItem {
	if index < 0 || index >= len(s.items) {
		return nil
	}
	return &s.items[index]
}

func (s *ResponsesStream) calledTools() bool {
	for i := range s.items {
		if s.items[i].call {
			return true
		}
	}
	return false
}

// Usage implements ClientStream.
func (s *ResponsesStream) Usage() Usage { return s.usage }

// Result implements ClientStream.
func (s *ResponsesStream) Result() *Result {
	var text []byte
	s.result.ToolCalls = s.result.ToolCalls[:0]
	for i := range s.items {
		switch it := &s.items[i]; {
		case it.call:
			s.result.ToolCalls = append(s.result.ToolCalls, ToolCall{ID: it.callID, Name: it.name, Arguments: string(it.buf)})
		case it.tracked:
			text = append(text, it.buf...)
		}
	}
	s.result.Text = string(text)
	return &s.result
}

// Done implements ClientStream: the terminal response event has been seen.
func (s *ResponsesStream) Done() bool { return s.terminal }

// next returns the sequence number of an event the stream writes itself.
func (s *ResponsesStream) next() int64 {
	s.seq++
	return s.seq
}

// Err implements ClientStream.
func (s *ResponsesStream) Err() error { return s.err }

// Close implements ClientStream. After an upstream error event it writes
// nothing: the error already ended the stream. A stream broken by a
// malformed event (Err) ends with Fail's error event instead.
func (s *ResponsesStream) Close(dst []byte, delivery []byte) []byte {
	if s.failed {
		return dst
	}
	if s.err != nil {
		return s.Fail(dst, s.err.Error())
	}
	if s.held == nil {
		dst = s.finishItems(dst)
		s.heldType = "response.completed"
		s.held = s.syntheticCompleted()
	}
	held := s.held
	if delivery != nil {
		held = setRaw(held, "response.delivery", delivery)
	}
	return AppendSSE(dst, s.heldType, held)
}

// finishItems writes the response.created and item done events an upstream
// that ended early did not send.
func (s *ResponsesStream) finishItems(dst []byte) []byte {
	dst = s.begin(dst)
	for i := range s.items {
		it := &s.items[i]
		if it.done || !it.tracked {
			continue
		}
		it.done = true
		if it.call {
			b := s.itemEvent("response.function_call_arguments.done", i)
			b = AppendJSONString(append(b, `,"arguments":`...), string(it.buf))
			dst = AppendSSE(dst, "response.function_call_arguments.done", append(b, '}'))
		} else if it.partOpen {
			b := s.itemEvent("response.output_text.done", i)
			b = AppendJSONString(append(b, `,"content_index":0,"text":`...), string(it.buf))
			dst = AppendSSE(dst, "response.output_text.done", append(b, '}'))
			b = s.itemEvent("response.content_part.done", i)
			b = append(b, `,"content_index":0,"part":{"type":"output_text","annotations":[],"text":`...)
			b = AppendJSONString(b, string(it.buf))
			dst = AppendSSE(dst, "response.content_part.done", append(b, "}}"...))
		}
		b := s.event("response.output_item.done")
		b = strconv.AppendInt(append(b, `,"output_index":`...), int64(i), 10)
		b = s.appendItem(append(b, `,"item":`...), it)
		dst = AppendSSE(dst, "response.output_item.done", append(b, '}'))
	}
	return dst
}

// begin writes the response.created of a stream whose upstream sent none.
func (s *ResponsesStream) begin(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	b := s.event("response.created")
	b = s.appendResponse(append(b, `,"response":`...), "in_progress", false, "")
	return AppendSSE(dst, "response.created", append(b, '}'))
}

// syntheticCompleted is the response.completed of a stream whose upstream
// sent no terminal event.
func (s *ResponsesStream) syntheticCompleted() []byte {
	status := "completed"
	if s.result.FinishReason == "" {
		s.result.FinishReason = chatFinishFromResponses(status, "", s.calledTools())
	}
	b := s.event("response.completed")
	b = s.appendResponse(append(b, `,"response":`...), status, true, "")
	return append(b, '}')
}

// event starts the data of an event the stream writes itself.
func (s *ResponsesStream) event(typ string) []byte {
	b := append(make([]byte, 0, 256), `{"type":`...)
	b = AppendJSONString(b, typ)
	b = append(b, `,"sequence_number":`...)
	return strconv.AppendInt(b, s.next(), 10)
}

// itemEvent starts the data of an event about output item i.
func (s *ResponsesStream) itemEvent(typ string, i int) []byte {
	b := s.event(typ)
	b = AppendJSONString(append(b, `,"item_id":`...), s.items[i].id)
	return strconv.AppendInt(append(b, `,"output_index":`...), int64(i), 10)
}

// appendResponse writes the response object as the stream has seen it. A
// failure message makes it a failed response's, with that error.
func (s *ResponsesStream) appendResponse(b []byte, status string, withOutput bool, failure string) []byte {
	b = AppendJSONString(append(b, `{"id":`...), s.id)
	b = strconv.AppendInt(append(b, `,"object":"response","created_at":`...), createdOr(s.created), 10)
	b = appendStringField(b, "status", status)
	if failure != "" {
		b = append(b, `,"error":{"code":"server_error","message":`...)
		b = AppendJSONString(b, failure)
		b = append(b, `},"incomplete_details":null`...)
	} else {
		b = append(b, `,"error":null,"incomplete_details":null`...)
	}
	b = appendStringField(b, "model", s.model)
	b = append(b, `,"output":[`...)
	if withOutput {
		for i := range s.items {
			if s.items[i].tracked {
				b = s.appendItem(appendSep(b), &s.items[i])
			}
		}
	}
	b = append(b, `],"usage":`...)
	if withOutput && s.usage.Known {
		b = appendResponsesUsage(b, tokenUsageOf(s.usage))
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// appendItem writes a tracked item as an output item: completed once it is
// done, incomplete before (in a failed response).
func (s *ResponsesStream) appendItem(b []byte, it *trackedItem) []byte {
	b = AppendJSONString(append(b, `{"id":`...), it.id)
	status := "incomplete"
	if it.done {
		status = "completed"
	}
	if it.call {
		b = append(b, `,"type":"function_call"`...)
		b = appendStringField(b, "status", status)
		b = AppendJSONString(append(b, `,"arguments":`...), string(it.buf))
		b = appendStringField(b, "call_id", it.callID)
		b = appendStringField(b, "name", it.name)
		return append(b, '}')
	}
	b = append(b, `,"type":"message"`...)
	b = appendStringField(b, "status", status)
	b = append(b, `,"role":"assistant","content":[{"type":"output_text","annotations":[],"text":`...)
	b = AppendJSONString(b, string(it.buf))
	return append(b, "}]}"...)
}

// Fail implements ClientStream: the stream ends with response.failed, the
// terminal event of a response that failed, carrying the message and the
// output so far. No response.completed follows, so clients see the
// response as failed rather than complete. When the upstream's own
// terminal event had come before the break, it is sent as it is and the
// responses shape's error event follows it.
func (s *ResponsesStream) Fail(dst []byte, message string) []byte {
	if s.failed {
		return dst
	}
	s.failed = true
	if s.held != nil {
		dst = AppendSSE(dst, s.heldType, s.held)
		s.held = nil
		b := append(make([]byte, 0, 128+len(message)), `{"type":"error","code":"upstream_stream_error","message":`...)
		b = AppendJSONString(b, message)
		b = append(b, `,"param":null,"sequence_number":`...)
		b = strconv.AppendInt(b, s.next(), 10)
		return AppendSSE(dst, "error", append(b, '}'))
	}
	dst = s.begin(dst)
	b := s.event("response.failed")
	b = s.appendResponse(append(b, `,"response":`...), "failed", true, message)
	return AppendSSE(dst, "response.failed", append(b, '}'))
}

var _ ClientStream = (*ResponsesStream)(nil)
