package translate

import (
	"errors"
	"reflect"
	"testing"
)

func TestMessagesStreamParserFixture(t *testing.T) {
	var r SSEReader
	r.Write(convFixture(t, "messages_stream_tools.sse"))
	var events []SSEEvent
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		events = append(events, SSEEvent{Event: append([]byte(nil), ev.Event...), Data: append([]byte(nil), ev.Data...)})
	}
	rec, err := parse(t, &messagesStreamParser{}, events...)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "toolu_01RyoSbBmpFZHFddoeLDyFDF", Name: "search", Arguments: `{"query": "Detroit Tigers baseball game schedule today"}`}}
	if !reflect.DeepEqual(rec.calls, want) || rec.reason != "tool_calls" || rec.finished != 1 {
		t.Errorf("recorded %+v", rec)
	}
	if rec.usage != (tokenUsage{input: 465, output: 88, known: true}) {
		t.Errorf("usage %+v", rec.usage)
	}
}

func TestMessagesStreamParserVariants(t *testing.T) {
	rec, err := parse(t, &messagesStreamParser{}, dataEvents(
		`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":2,"cache_read_input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"f","input":{"a":[1, 2]}}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"ping"}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":2,"cache_read_input_tokens":10,"output_tokens":7}}`,
	)...)
	if err != nil {
		t.Fatal(err)
	}
	// The server tool's block is not a call the client made; the tool_use
	// whose input came whole in its start event is.
	want := []ToolCall{{ID: "toolu_2", Name: "f", Arguments: `{"a":[1,2]}`}}
	if !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("calls %+v", rec.calls)
	}
	if rec.usage != (tokenUsage{input: 12, output: 7, cached: 10, known: true}) || rec.finished != 0 {
		t.Errorf("usage %+v finished %d", rec.usage, rec.finished)
	}
}

func TestMessagesStreamParserError(t *testing.T) {
	_, err := parse(t, &messagesStreamParser{}, SSEEvent{Event: []byte("error"), Data: []byte(`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`)})
	var up *upstreamStreamError
	if !errors.As(err, &up) || up.message != "Overloaded" {
		t.Errorf("error %v", err)
	}
}
