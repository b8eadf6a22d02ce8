package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// MessagesStream is the ClientStream of a messages-shape client. It rewrites
// message_start to the gateway's message id and model, accumulates the
// result and usage, and holds back message_delta until the stream ends so
// that the delivery block can ride on it, as a top-level member of its data.
// Close writes message_delta and message_stop, and whatever closing events
// an upstream that ended early did not send.
type MessagesStream struct {
	id, model string

	started bool
	// openBlock is the index of a content block started and not stopped, or
	// -1.
	openBlock int
	held      []byte
	stopped   bool
	// failed is set once an error event has been written: it ends the
	// stream, and nothing may follow it.
	failed bool
	// err is the malformed upstream event that broke the stream.
	err    error
	text   []byte
	calls  []blockCall
	usage  Usage
	result Result
}

// blockCall is a tool_use block being streamed.
type blockCall struct {
	index int
	id    string
	name  string
	args  []byte
}

// NewMessagesStream returns the ClientStream for a messages-shape client.
func NewMessagesStream(id, model string) *MessagesStream {
	return &MessagesStream{id: id, model: model, openBlock: -1}
}

// Event implements ClientStream. An event that is not JSON, or lacks what
// its type needs, is not passed on: it breaks the stream (see Err).
func (s *MessagesStream) Event(dst []byte, event string, data []byte) []byte {
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
	index, member, err := messagesEventMembers(typ, root)
	if err != nil {
		s.err = err
		return dst
	}
	switch typ {
	case "message_start":
		s.started = true
		msg := member
		s.usage = countedUsage(anthropicUsage(msg.Get("usage")))
		data = setStrings(data, "message.id", s.id, "message.model", s.model)
	case "content_block_start":
		s.openBlock = index
		cb := member
		switch cb.Get("type").Str {
		case "text":
			s.text = append(s.text, cb.Get("text").Str...)
		case "tool_use":
			c := blockCall{index: index, id: cb.Get("id").Str, name: cb.Get("name").Str}
			if in := cb.Get("input"); in.IsObject() && hasMembers(in) {
				c.args = appendCompactJSON(c.args, in.Raw)
			}
			s.calls = append(s.calls, c)
		}
	case "content_block_delta":
		delta := member
		switch delta.Get("type").Str {
		case "text_delta":
			s.text = append(s.text, delta.Get("text").Str...)
		case "input_json_delta":
			if c := s.call(index); c != nil {
				c.args = append(c.args, delta.Get("partial_json").Str...)
			}
		}
	case "content_block_stop":
		s.openBlock = -1
	case "message_delta":
		if sr := member.Get("stop_reason").Str; sr != "" {
			s.result.FinishReason = chatFinishFromAnthropic(sr)
		}
		if u := root.Get("usage"); u.IsObject() {
			d := anthropicUsage(u)
			if !u.Get("input_tokens").Exists() {
				// The input, by class, came with message_start.
				start := tokenUsageOf(s.usage)
				d.input, d.cached, d.cacheWrite, d.cacheWrite1h = start.input, start.cached, start.cacheWrite, start.cacheWrite1h
			}
			s.usage = countedUsage(d)
		}
		// Held until Close; data may alias the upstream's read buffer.
		s.held = append(s.held[:0], data...)
		return dst
	case "message_stop":
		s.stopped = true
		return dst
	case "error":
		s.failed = true
	}
	return AppendSSE(dst, typ, data)
}

// countedUsage returns the gateway's view of a messages-shape usage. The
// shape requires usage on message_start and message_delta, so a stream
// transcoded from an upstream that reported none carries zeros; no real call
// uses no tokens at all, so all zeros counts as unknown rather than free.
func countedUsage(u tokenUsage) Usage {
	if u.input == 0 && u.output == 0 {
		return Usage{}
	}
	u.known = true
	return u.usage()
}

func (s *MessagesStream) call(index int) *blockCall {
	for i := range s.calls {
		if s.calls[i].index == index {
			return &s.calls[i]
		}
	}
	return nil
}

// Usage implements ClientStream.
func (s *MessagesStream) Usage() Usage { return s.usage }

// Result implements ClientStream.
func (s *MessagesStream) Result() *Result {
	s.result.Text = string(s.text)
	s.result.ToolCalls = s.result.ToolCalls[:0]
	for _, c := range s.calls {
		s.result.ToolCalls = append(s.result.ToolCalls, ToolCall{ID: c.id, Name: c.name, Arguments: string(c.args)})
	}
	return &s.result
}

// Done implements ClientStream: message_stop has been seen.
func (s *MessagesStream) Done() bool { return s.stopped }

// Err implements ClientStream.
func (s *MessagesStream) Err() error { return s.err }

// Close implements ClientStream. After an upstream error event it writes
// nothing: the error already ended the stream. A stream broken by a
// malformed event (Err) ends with Fail's error event instead.
func (s *MessagesStream) Close(dst []byte, delivery []byte) []byte {
	if s.failed {
		return dst
	}
	if s.err != nil {
		return s.Fail(dst, s.err.Error())
	}
	dst = s.closeBlocks(dst)
	delta := s.held
	if delta == nil {
		delta = s.syntheticDelta()
	}
	if delivery != nil {
		delta = setRaw(delta, "delivery", delivery)
	}
	s.held = nil
	dst = AppendSSE(dst, "message_delta", delta)
	return AppendSSE(dst, "message_stop", []byte(`{"type":"message_stop"}`))
}

// closeBlocks writes the message_start and content_block_stop an upstream
// that ended early did not send.
func (s *MessagesStream) closeBlocks(dst []byte) []byte {
	if !s.started {
		s.started = true
		b := append(make([]byte, 0, 192), `{"type":"message_start","message":{"id":`...)
		b = AppendJSONString(b, s.id)
		b = append(b, `,"type":"message","role":"assistant","model":`...)
		b = AppendJSONString(b, s.model)
		b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`...)
		dst = AppendSSE(dst, "message_start", b)
	}
	if s.openBlock >= 0 {
		b := strconv.AppendInt([]byte(`{"type":"content_block_stop","index":`), int64(s.openBlock), 10)
		dst = AppendSSE(dst, "content_block_stop", append(b, '}'))
		s.openBlock = -1
	}
	return dst
}

// syntheticDelta is the message_delta of a stream whose upstream sent none.
func (s *MessagesStream) syntheticDelta() []byte {
	reason := s.result.FinishReason
	if reason == "" && len(s.calls) > 0 {
		reason = "tool_calls"
	}
	b := append(make([]byte, 0, 128), `{"type":"message_delta","delta":{"stop_reason":`...)
	b = AppendJSONString(b, anthropicStopFromChat(reason))
	b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(s.usage.OutputTokens), 10)
	return append(b, "}}"...)
}

// Fail implements ClientStream: a held message_delta is sent as it is, then
// the error event the messages shape uses inside streams. No message_stop
// follows, so clients see the stream as failed rather than complete.
func (s *MessagesStream) Fail(dst []byte, message string) []byte {
	if s.failed {
		return dst
	}
	s.failed = true
	if s.held != nil {
		dst = AppendSSE(dst, "message_delta", s.held)
		s.held = nil
	}
	b := append(make([]byte, 0, 64+len(message)), `{"type":"error","error":{"type":"api_error","message":`...)
	b = AppendJSONString(b, message)
	return AppendSSE(dst, "error", append(b, "}}"...))
}

var _ ClientStream = (*MessagesStream)(nil)
