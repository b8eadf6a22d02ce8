package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ChatStream is the ClientStream of a chat-completions client. It rewrites
// every chunk to the gateway's id and model, accumulates the result and
// usage, and holds back the final chunks (the one with finish_reason and the
// usage chunk) so that the delivery block rides on the last chunk before
// [DONE].
type ChatStream struct {
	id, model    string
	includeUsage bool
	created      int64

	held   [][]byte
	usage  Usage
	result Result
	done   bool
	// failed is set by an upstream error chunk: the stream ends there.
	failed bool
	calls  []toolCallBuf
}

type toolCallBuf struct {
	id, name string
	args     []byte
}

// NewChatStream returns the ClientStream for a chat client. includeUsage is
// what the client asked for in stream_options; the gateway always asks the
// upstream for usage and drops the usage chunk when the client did not.
func NewChatStream(id, model string, includeUsage bool) *ChatStream {
	return &ChatStream{id: id, model: model, includeUsage: includeUsage}
}

// Event implements ClientStream.
func (s *ChatStream) Event(dst []byte, _ string, data []byte) []byte {
	if s.failed {
		return dst
	}
	if string(data) == "[DONE]" {
		s.done = true
		return dst
	}
	root := gjson.ParseBytes(data)
	if root.Get("error").Exists() {
		// An upstream error inside the stream is passed on as it came, as
		// the stream's last event: what was held goes first.
		for _, h := range s.held {
			dst = AppendSSE(dst, "", h)
		}
		s.held = s.held[:0]
		s.failed = true
		return AppendSSE(dst, "", data)
	}
	if s.created == 0 {
		s.created = root.Get("created").Int()
	}
	final := false
	usageOnly := false
	if usage := root.Get("usage"); usage.IsObject() {
		s.usage = Usage{
			InputTokens:  int(usage.Get("prompt_tokens").Int()),
			OutputTokens: int(usage.Get("completion_tokens").Int()),
			Known:        true,
		}
		final = true
	}
	choices := root.Get("choices")
	if !choices.IsArray() || len(choices.Array()) == 0 {
		usageOnly = true
	}
	choices.ForEach(func(_, c gjson.Result) bool {
		delta := c.Get("delta")
		if t := delta.Get("content"); t.Type == gjson.String {
			s.result.Text += t.Str
		}
		delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			s.addToolDelta(tc)
			return true
		})
		if fr := c.Get("finish_reason"); fr.Type == gjson.String {
			s.result.FinishReason = fr.Str
			final = true
		}
		return true
	})
	chunk := setString(data, "id", s.id)
	chunk = setString(chunk, "model", s.model)
	if usageOnly && !s.includeUsage {
		return dst
	}
	if !s.includeUsage && root.Get("usage").Exists() && !usageOnly {
		// Usage the client did not ask for is removed from content chunks too.
		chunk, _ = sjson.DeleteBytes(chunk, "usage")
	}
	if final {
		s.held = append(s.held, chunk)
		return dst
	}
	for _, h := range s.held {
		dst = AppendSSE(dst, "", h)
	}
	s.held = s.held[:0]
	return AppendSSE(dst, "", chunk)
}

func (s *ChatStream) addToolDelta(tc gjson.Result) {
	idx := int(tc.Get("index").Int())
	for len(s.calls) <= idx {
		s.calls = append(s.calls, toolCallBuf{})
	}
	c := &s.calls[idx]
	if id := tc.Get("id").Str; id != "" {
		c.id = id
	}
	if name := tc.Get("function.name").Str; name != "" {
		c.name = name
	}
	c.args = append(c.args, tc.Get("function.arguments").Str...)
}

// Usage implements ClientStream.
func (s *ChatStream) Usage() Usage { return s.usage }

// Result implements ClientStream.
func (s *ChatStream) Result() *Result {
	if len(s.calls) != len(s.result.ToolCalls) {
		s.result.ToolCalls = s.result.ToolCalls[:0]
		for _, c := range s.calls {
			s.result.ToolCalls = append(s.result.ToolCalls, ToolCall{ID: c.id, Name: c.name, Arguments: string(c.args)})
		}
	} else {
		for i, c := range s.calls {
			s.result.ToolCalls[i].Arguments = string(c.args)
		}
	}
	return &s.result
}

// Done implements ClientStream.
func (s *ChatStream) Done() bool { return s.done }

// Failed reports whether the upstream sent an error inside the stream.
func (s *ChatStream) Failed() bool { return s.failed }

// Close implements ClientStream. After an upstream error it adds nothing:
// the error stays the last event and no [DONE] follows.
func (s *ChatStream) Close(dst []byte, delivery []byte) []byte {
	if s.failed {
		return dst
	}
	if len(s.held) == 0 {
		// The upstream ended without a final chunk: make one to carry delivery.
		s.held = append(s.held, s.syntheticChunk())
	}
	if delivery != nil {
		last := len(s.held) - 1
		if out, err := sjson.SetRawBytes(s.held[last], "delivery", delivery); err == nil {
			s.held[last] = out
		}
	}
	for _, h := range s.held {
		dst = AppendSSE(dst, "", h)
	}
	s.held = s.held[:0]
	return AppendSSE(dst, "", []byte("[DONE]"))
}

func (s *ChatStream) syntheticChunk() []byte {
	b := []byte(`{"id":`)
	b = AppendJSONString(b, s.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = AppendJSONString(b, s.model)
	return append(b, `,"choices":[]}`...)
}

// Fail implements ClientStream: the chunks held so far are sent, then an
// error object in the form OpenAI uses inside streams. No [DONE] follows, so
// clients see the stream as failed rather than complete.
func (s *ChatStream) Fail(dst []byte, message string) []byte {
	for _, h := range s.held {
		dst = AppendSSE(dst, "", h)
	}
	s.held = s.held[:0]
	b := []byte(`{"error":{"message":`)
	b = AppendJSONString(b, message)
	b = append(b, `,"type":"upstream_error","code":"upstream_stream_error","param":null}}`...)
	return AppendSSE(dst, "", b)
}

var _ ClientStream = (*ChatStream)(nil)
