package translate

import (
	"errors"
	"reflect"
	"testing"
)

// parse runs data lines through a parser into a recorder.
func parse(t *testing.T, p streamParser, events ...SSEEvent) (*recorder, error) {
	t.Helper()
	rec := &recorder{}
	for _, ev := range events {
		if err := p.event(ev, rec, func(string, []byte) {}); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

func dataEvents(lines ...string) []SSEEvent {
	out := make([]SSEEvent, len(lines))
	for i, l := range lines {
		out[i] = SSEEvent{Data: []byte(l)}
	}
	return out
}

func TestChatStreamParserFixture(t *testing.T) {
	var r SSEReader
	r.Write(convFixture(t, "chat_stream_tool.sse"))
	var events []SSEEvent
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		events = append(events, SSEEvent{Data: append([]byte(nil), ev.Data...)})
	}
	rec, err := parse(t, &chatStreamParser{}, events...)
	if err != nil {
		t.Fatal(err)
	}
	if rec.began != 1 || rec.id != "chatcmpl-BwkwXxA0yAyLKZelloERJWtxKor9z" || rec.reason != "tool_calls" || rec.finished < 1 {
		t.Errorf("recorded %+v", rec)
	}
	want := []ToolCall{{ID: "call_HjeqP7YeRkoNj0de9e3U4X4B", Name: "read_file", Arguments: `{"path":"README.md"}`}}
	if !reflect.DeepEqual(rec.calls, want) || rec.usage.input != 60 || rec.usage.output != 15 {
		t.Errorf("calls %+v usage %+v", rec.calls, rec.usage)
	}
}

func TestChatStreamParserWholeCallsAndOtherChoices(t *testing.T) {
	rec, err := parse(t, &chatStreamParser{}, dataEvents(
		`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]}},{"index":1,"delta":{"content":"other choice"}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}`,
	)...)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "call_a", Name: "f", Arguments: `{"x":1}`}, {ID: "call_b", Name: "g", Arguments: "{}"}}
	if !reflect.DeepEqual(rec.calls, want) || rec.said.String() != "" || rec.finished != 1 {
		t.Errorf("recorded %+v", rec)
	}
}

func TestChatStreamParserCallsWithoutIndex(t *testing.T) {
	rec, err := parse(t, &chatStreamParser{}, dataEvents(
		`{"id":"c2","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
		`{"id":"c2","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
		`{"id":"c2","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
	)...)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "call_a", Name: "f", Arguments: `{"x":1}`}, {ID: "call_b", Name: "g", Arguments: "{}"}}
	if !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("calls %+v", rec.calls)
	}
}

func TestChatStreamParserErrors(t *testing.T) {
	_, err := parse(t, &chatStreamParser{}, dataEvents(`{"error":{"message":"Provider disconnected","code":"server_error"}}`)...)
	var up *upstreamStreamError
	if !errors.As(err, &up) || up.message != "Provider disconnected" {
		t.Errorf("error %v", err)
	}
	if _, err := parse(t, &chatStreamParser{}, dataEvents(`{"choices":[`)...); !errors.Is(err, errNotJSON) {
		t.Errorf("error %v", err)
	}
}
