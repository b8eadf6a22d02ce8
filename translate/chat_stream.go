package translate

import (
	"strconv"
	"strings"

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
	// err is the malformed upstream chunk that broke the stream.
	err error
	// text accumulates the assistant text; Result copies it out once.
	text  []byte
	calls []toolCallBuf
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

// Event implements ClientStream. A chunk that is not a JSON object, or
// whose choices are not what chunks carry, is not passed on: it breaks the
// stream (see Err).
func (s *ChatStream) Event(dst []byte, _ string, data []byte) []byte {
	if s.failed || s.err != nil {
		return dst
	}
	if string(data) == "[DONE]" {
		s.done = true
		return dst
	}
	// One pass over the chunk's members: every lookup below reuses it. The
	// chunk is read in place, not copied: data is the reader's buffer, so
	// the few strings kept past this call are cloned.
	var id, model, created, usage, choices gjson.Result
	hasError := false
	// The same pass checks the chunk's framing: a chunk cut short, run
	// together with another or not JSON at all is told from a whole one
	// without a second pass over it.
	frame := newObjectFrame(data)
	root := gjson.Parse(bodyString(data))
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			id = v
		case "model":
			model = v
		case "created":
			created = v
		case "usage":
			usage = v
		case "choices":
			choices = v
		case "error":
			hasError = true
		}
		return frame.member(&k, &v)
	})
	if !frame.closed() {
		// The rare case pays for telling the two apart.
		s.err = errNotJSON
		if root.Exists() && !root.IsObject() && gjson.ValidBytes(data) {
			s.err = errNotObject
		}
		return dst
	}
	if hasError {
		// An upstream error inside the stream is passed on as it came, as
		// the stream's last event: what was held goes first.
		dst = s.flushHeld(dst)
		s.failed = true
		return AppendSSE(dst, "", data)
	}
	if !choices.IsArray() && choices.Type != gjson.Null && choices.Exists() {
		s.err = lacks(chunkType, "choices", choices)
		return dst
	}
	if s.created == 0 {
		s.created = created.Int()
	}
	final := false
	hasUsage := usage.IsObject()
	if hasUsage {
		s.usage = Usage{
			InputTokens:     int(usage.Get("prompt_tokens").Int()),
			OutputTokens:    int(usage.Get("completion_tokens").Int()),
			CacheReadTokens: int(usage.Get("prompt_tokens_details.cached_tokens").Int()),
			Known:           true,
		}
		final = true
	}
	usageOnly := true
	choices.ForEach(func(_, c gjson.Result) bool {
		usageOnly = false
		if !c.IsObject() {
			s.err = malformed(chunkType, "has a choice that is not an object")
			return false
		}
		c.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "delta":
				if !v.IsObject() && v.Type != gjson.Null {
					s.err = lacks(chunkType, "choices.delta", v)
					return false
				}
				v.ForEach(func(k, v gjson.Result) bool {
					switch k.Str {
					case "content":
						if v.Type == gjson.String {
							s.text = append(s.text, v.Str...)
						}
					case "tool_calls":
						v.ForEach(func(_, tc gjson.Result) bool {
							s.addToolDelta(tc)
							return true
						})
					}
					return true
				})
			case "finish_reason":
				if v.Type == gjson.String {
					s.result.FinishReason = strings.Clone(v.Str)
					final = true
				}
			}
			return true
		})
		return true
	})
	if s.err != nil {
		return dst
	}
	if usageOnly && !s.includeUsage {
		return dst
	}
	// A null usage (OpenAI sends one on every chunk once usage is asked
	// for) is harmless; a real one the client did not ask for is removed.
	if final || (!s.includeUsage && hasUsage) {
		chunk := appendWithIDModel(nil, data, id, s.id, model, s.model)
		if !s.includeUsage && hasUsage {
			// Usage the client did not ask for is removed from content chunks too.
			chunk, _ = sjson.DeleteBytes(chunk, "usage")
		}
		if final {
			s.held = append(s.held, chunk)
			return dst
		}
		dst = s.flushHeld(dst)
		return AppendSSE(dst, "", chunk)
	}
	dst = s.flushHeld(dst)
	// The common case: the chunk goes out at once, rewritten straight into
	// the output buffer.
	dst = append(dst, "data: "...)
	dst = appendWithIDModel(dst, data, id, s.id, model, s.model)
	return append(dst, '\n', '\n')
}

// flushHeld sends held chunks that turned out not to be the last.
func (s *ChatStream) flushHeld(dst []byte) []byte {
	for _, h := range s.held {
		dst = AppendSSE(dst, "", h)
	}
	s.held = s.held[:0]
	return dst
}

func (s *ChatStream) addToolDelta(tc gjson.Result) {
	idx := int(tc.Get("index").Int())
	for len(s.calls) <= idx {
		s.calls = append(s.calls, toolCallBuf{})
	}
	c := &s.calls[idx]
	if id := tc.Get("id").Str; id != "" {
		c.id = strings.Clone(id)
	}
	if name := tc.Get("function.name").Str; name != "" {
		c.name = strings.Clone(name)
	}
	c.args = append(c.args, tc.Get("function.arguments").Str...)
}

// Usage implements ClientStream.
func (s *ChatStream) Usage() Usage { return s.usage }

// Result implements ClientStream.
func (s *ChatStream) Result() *Result {
	s.result.Text = string(s.text)
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

// Failed reports whether the stream ended with an error chunk: one the
// upstream sent inside the stream, or Fail's.
func (s *ChatStream) Failed() bool { return s.failed }

// Err implements ClientStream.
func (s *ChatStream) Err() error { return s.err }

// Close implements ClientStream. After an upstream error it adds nothing:
// the error stays the last event and no [DONE] follows. A stream broken by a
// malformed chunk (Err) ends with Fail's error chunk instead.
func (s *ChatStream) Close(dst []byte, delivery []byte) []byte {
	if s.failed {
		return dst
	}
	if s.err != nil {
		return s.Fail(dst, s.err.Error())
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
	if s.failed {
		return dst
	}
	s.failed = true
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
