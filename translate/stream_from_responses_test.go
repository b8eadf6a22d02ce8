package translate

import (
	"errors"
	"reflect"
	"testing"
)

func TestResponsesStreamParserFixture(t *testing.T) {
	var r SSEReader
	r.Write(convFixture(t, "responses_stream_text.sse"))
	var events []SSEEvent
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		events = append(events, SSEEvent{Event: append([]byte(nil), ev.Event...), Data: append([]byte(nil), ev.Data...)})
	}
	rec, err := parse(t, &responsesStreamParser{}, events...)
	if err != nil {
		t.Fatal(err)
	}
	if rec.said.String() != "Why did the scarecrow win an award?\n\nBecause he was outstanding in his field!" || rec.reason != "stop" || rec.finished != 1 || rec.began != 1 {
		t.Errorf("recorded %+v", rec)
	}
}

func TestResponsesStreamParserWholeItems(t *testing.T) {
	// Some compatible servers send items only in their done events, or
	// arguments only in function_call_arguments.done.
	rec, err := parse(t, &responsesStreamParser{}, dataEvents(
		`{"type":"response.created","response":{"id":"resp_1","model":"m","created_at":3}}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{\"k\":true}"}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":"{\"k\":true}"}}`,
		`{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","call_id":"call_2","name":"g","arguments":"{}"}}`,
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":2}}}`,
	)...)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"k":true}`}, {ID: "call_2", Name: "g", Arguments: "{}"}}
	if rec.said.String() != "Hi." || !reflect.DeepEqual(rec.calls, want) || rec.reason != "tool_calls" {
		t.Errorf("recorded %+v", rec)
	}
}

func TestResponsesStreamParserFailures(t *testing.T) {
	for data, message := range map[string]string{
		`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."}}}`: "The model failed to generate a response.",
		`{"type":"response.failed","response":{"status":"failed"}}`:                                                                                      "the upstream response failed",
		`{"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null,"sequence_number":4}`:                                      "Something went wrong",
	} {
		_, err := parse(t, &responsesStreamParser{}, dataEvents(data)...)
		var up *upstreamStreamError
		if !errors.As(err, &up) || up.message != message {
			t.Errorf("%s: error %v", data, err)
		}
	}
}
