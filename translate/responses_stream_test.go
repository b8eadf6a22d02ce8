package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestResponsesStreamHoldsCompleted(t *testing.T) {
	s := NewResponsesStream("resp_gw1", "router-1")
	out := feedFixture(t, s, "responses_stream_tools.sse", -1)
	events := readSSE(t, out)
	if len(events) != 28 || events[len(events)-1].name != "response.output_item.done" {
		t.Fatalf("%d events before Close, last %s", len(events), events[len(events)-1].name)
	}
	for _, ev := range events[:2] {
		convWant(t, []byte(ev.data), "response.id", "resp_gw1")
		convWant(t, []byte(ev.data), "response.model", "router-1")
	}
	if !s.Done() {
		t.Error("not done after response.completed")
	}
	if u := s.Usage(); u != (Usage{InputTokens: 92, OutputTokens: 52, Known: true}) {
		t.Errorf("usage %+v", u)
	}
	res := s.Result()
	if res.FinishReason != "tool_calls" || len(res.ToolCalls) != 2 || res.ToolCalls[1].ID != "call_ydtVlYcFLcDX2C7dcHgKZjl3" || res.ToolCalls[1].Arguments != `{"city":"Detroit"}` {
		t.Errorf("result %+v", *res)
	}
	closed := readSSE(t, s.Close(nil, []byte(`{"tier":"standard","upgraded":false}`)))
	if len(closed) != 1 || closed[0].name != "response.completed" {
		t.Fatalf("Close wrote %v", closed)
	}
	done := []byte(closed[0].data)
	convWant(t, done, "response.id", "resp_gw1")
	convWant(t, done, "response.model", "router-1")
	convWant(t, done, "response.delivery", `{"tier":"standard","upgraded":false}`)
	convWant(t, done, "sequence_number", "28")
	convWant(t, done, "response.usage.total_tokens", "144")
}

func TestResponsesStreamFinishesTruncatedStream(t *testing.T) {
	s := NewResponsesStream("resp_gw2", "router-1")
	// created, in_progress, item added, part added and three deltas.
	out := feedFixture(t, s, "responses_stream_text.sse", 7)
	if s.Done() {
		t.Error("done without a terminal event")
	}
	events := readSSE(t, s.Close(out, []byte(`{"tier":"standard"}`)))
	var names []string
	for _, ev := range events {
		names = append(names, ev.name)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added" +
		" response.output_text.delta response.output_text.delta response.output_text.delta" +
		" response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	const itemID = "msg_0f9c4b2f224d858000695fa063d4708197af73c2f37cb0b9d3"
	for i, ev := range events[7:] {
		if n := gjson.Get(ev.data, "sequence_number").Int(); n != int64(7+i) {
			t.Errorf("%s has sequence_number %d, want %d", ev.name, n, 7+i)
		}
	}
	convWant(t, []byte(events[7].data), "item_id", itemID)
	convWant(t, []byte(events[7].data), "text", "Why did the")
	convWant(t, []byte(events[8].data), "part.text", "Why did the")
	convWant(t, []byte(events[9].data), "item.id", itemID)
	convWant(t, []byte(events[9].data), "item.status", "completed")
	done := []byte(events[10].data)
	convWant(t, done, "response.id", "resp_gw2")
	convWant(t, done, "response.status", "completed")
	convWant(t, done, "response.created_at", "1767874658")
	convWant(t, done, "response.output.0.content.0.text", "Why did the")
	convWant(t, done, "response.usage", "null")
	convWant(t, done, "response.delivery.tier", "standard")
	if s.Usage().Known {
		t.Error("usage known without a terminal event")
	}
}

func TestResponsesStreamClosesEmptyStream(t *testing.T) {
	s := NewResponsesStream("resp_gw3", "router-1")
	events := readSSE(t, s.Close(nil, nil))
	if len(events) != 2 || events[0].name != "response.created" || events[1].name != "response.completed" {
		t.Fatalf("events %v", events)
	}
	convWant(t, []byte(events[0].data), "sequence_number", "0")
	convWant(t, []byte(events[1].data), "sequence_number", "1")
	convWant(t, []byte(events[1].data), "response.output", "[]")
}

func TestResponsesStreamFail(t *testing.T) {
	s := NewResponsesStream("resp_gw4", "router-1")
	out := feedFixture(t, s, "responses_stream_text.sse", 6)
	events := readSSE(t, s.Fail(out, "upstream reset the connection"))
	last := events[len(events)-1]
	if last.name != "response.failed" {
		t.Fatalf("last event %s", last.name)
	}
	data := []byte(last.data)
	convWant(t, data, "type", "response.failed")
	convWant(t, data, "sequence_number", "6")
	convWant(t, data, "response.id", "resp_gw4")
	convWant(t, data, "response.model", "router-1")
	convWant(t, data, "response.status", "failed")
	convWant(t, data, "response.error.code", "server_error")
	convWant(t, data, "response.error.message", "upstream reset the connection")
	// The output so far is kept, marked incomplete.
	convWant(t, data, "response.output.0.status", "incomplete")
	if got := gjson.GetBytes(data, "response.output.0.content.0.text").Str; got == "" {
		t.Errorf("no partial text in %s", data)
	}
	if got := s.Fail(nil, "again"); len(got) != 0 {
		t.Errorf("a second Fail wrote %q", got)
	}
	if got := s.Close(nil, nil); len(got) != 0 {
		t.Errorf("Close after Fail wrote %q", got)
	}
}

func TestResponsesStreamFailAfterTerminal(t *testing.T) {
	// The upstream's response.completed came, then the stream broke: the
	// held event goes out as it is, and the error event follows it.
	s := NewResponsesStream("resp_gw7", "router-1")
	out := feedFixture(t, s, "responses_stream_text.sse", -1)
	events := readSSE(t, s.Fail(out, "cut"))
	n := len(events)
	if events[n-2].name != "response.completed" || events[n-1].name != "error" || gjson.Get(events[n-1].data, "message").Str != "cut" {
		t.Fatalf("last events %v", events[n-2:])
	}
}

func TestResponsesStreamHoldsFailed(t *testing.T) {
	s := NewResponsesStream("resp_gw5", "router-1")
	out := feedFixture(t, s, "responses_stream_failed.sse", -1)
	if !s.Done() {
		t.Error("not done after response.failed")
	}
	events := readSSE(t, s.Close(out, []byte(`{"tier":"standard"}`)))
	last := []byte(events[len(events)-1].data)
	convWant(t, last, "type", "response.failed")
	convWant(t, last, "response.id", "resp_gw5")
	convWant(t, last, "response.error.code", "server_error")
	convWant(t, last, "response.delivery.tier", "standard")
}

func TestResponsesStreamPassesUpstreamError(t *testing.T) {
	s := NewResponsesStream("resp_gw6", "router-1")
	events := readSSE(t, feedFixture(t, s, "responses_stream_error.sse", -1))
	last := events[len(events)-1]
	if last.name != "error" || gjson.Get(last.data, "message").Str != "Something went wrong" {
		t.Errorf("last event %v", last)
	}
	if got := s.Close(nil, []byte(`{"tier":"standard"}`)); len(got) != 0 {
		t.Errorf("Close after an error wrote %q", got)
	}
	if s.Done() {
		t.Error("done after an error")
	}
}
