package translate

import (
	"strings"
	"testing"
)

func TestChatStreamStopsAtUpstreamError(t *testing.T) {
	s := NewChatStream("chatcmpl-gw", "demo/m", false)
	var out []byte
	out = s.Event(out, "", []byte(`{"id":"up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`))
	out = s.Event(out, "", []byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
	out = s.Event(out, "", []byte(`{"id":"up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" more"},"finish_reason":null}]}`))
	out = s.Close(out, []byte(`{"tier":"standard"}`))
	got := string(out)
	if !strings.HasSuffix(got, "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n") {
		t.Fatalf("the error is not the last event:\n%s", got)
	}
	if strings.Contains(got, "more") || strings.Contains(got, "[DONE]") || !s.Failed() {
		t.Fatalf("the stream went on after the error:\n%s", got)
	}
	if !strings.Contains(got, `"id":"chatcmpl-gw"`) || s.Result().Text != "Hi" {
		t.Fatalf("rewrite/accumulation: %s %q", got, s.Result().Text)
	}
}

func TestChatStreamHoldsFinalChunkForDelivery(t *testing.T) {
	s := NewChatStream("chatcmpl-gw", "demo/m", true)
	var out []byte
	out = s.Event(out, "", []byte(`{"id":"up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`))
	before := len(out)
	out = s.Event(out, "", []byte(`{"id":"up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	out = s.Event(out, "", []byte(`{"id":"up","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
	out = s.Event(out, "", []byte(`[DONE]`))
	if len(out) != before {
		t.Fatalf("final chunks were sent before Close")
	}
	out = s.Close(out, []byte(`{"tier":"standard"}`))
	events := strings.Split(strings.TrimSpace(string(out)), "\n\n")
	if len(events) != 4 || !strings.Contains(events[2], `"delivery":{"tier":"standard"}`) || events[3] != "data: [DONE]" {
		t.Fatalf("events: %q", events)
	}
	if u := s.Usage(); !u.Known || u.InputTokens != 3 || u.OutputTokens != 1 || s.Result().FinishReason != "stop" {
		t.Fatalf("usage %+v result %+v", u, s.Result())
	}
}

// TestChatStreamKeepsNothingOfTheReadersBuffer: chunks are read in place,
// so what the stream keeps (finish reason, tool call id and name) must
// survive the reader reusing its buffer for the next bytes.
func TestChatStreamKeepsNothingOfTheReadersBuffer(t *testing.T) {
	s := NewChatStream("chatcmpl-gw", "demo/m", false)
	buf := []byte(`{"id":"u","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	s.Event(nil, "", buf)
	for i := range buf {
		buf[i] = 'x'
	}
	r := s.Result()
	if r.FinishReason != "tool_calls" || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "call_1" || r.ToolCalls[0].Name != "get_weather" {
		t.Fatalf("result after the buffer was reused: %+v", r)
	}
}
