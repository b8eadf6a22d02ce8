package translate

import (
	"bytes"
	"strings"
	"testing"
)

// feedFixture passes the first n events of a stream fixture (all when n < 0)
// to a ClientStream and returns what it wrote.
func feedFixture(t *testing.T, s ClientStream, name string, n int) []byte {
	t.Helper()
	var r SSEReader
	r.Write(convFixture(t, name))
	var out []byte
	for ev, ok := r.Next(); ok && n != 0; ev, ok = r.Next() {
		out = s.Event(out, string(ev.Event), ev.Data)
		n--
	}
	return out
}

func TestMessagesStreamHoldsMessageDelta(t *testing.T) {
	s := NewMessagesStream("msg_gw1", "router-1")
	out := feedFixture(t, s, "messages_stream_tools.sse", -1)
	events := readSSE(t, out)
	if got := events[len(events)-1].name; got != "content_block_stop" {
		t.Fatalf("last event before Close is %s", got)
	}
	if !s.Done() {
		t.Error("not done after message_stop")
	}
	start := []byte(events[0].data)
	convWant(t, start, "message.id", "msg_gw1")
	convWant(t, start, "message.model", "router-1")
	convWant(t, start, "message.usage.input_tokens", "465")
	if len(events) != 19 {
		t.Errorf("%d events passed on, want the 19 before message_delta (ping included)", len(events))
	}
	if u := s.Usage(); u != (Usage{InputTokens: 465, OutputTokens: 88, Known: true}) {
		t.Errorf("usage %+v", u)
	}
	res := s.Result()
	if res.FinishReason != "tool_calls" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"query": "Detroit Tigers baseball game schedule today"}` {
		t.Errorf("result %+v", *res)
	}

	closed := readSSE(t, s.Close(nil, []byte("{\n  \"tier\": \"batch\",\n  \"eta_ms\": 0\n}")))
	if len(closed) != 2 || closed[0].name != "message_delta" || closed[1].name != "message_stop" {
		t.Fatalf("Close wrote %v", closed)
	}
	delta := []byte(closed[0].data)
	convWant(t, delta, "delivery", `{"tier":"batch","eta_ms":0}`)
	convWant(t, delta, "delta.stop_reason", "tool_use")
	convWant(t, delta, "usage.output_tokens", "88")
	convWant(t, []byte(closed[1].data), "type", "message_stop")
}

func TestMessagesStreamClosesTruncatedStream(t *testing.T) {
	s := NewMessagesStream("msg_gw2", "router-1")
	// message_start, the text block's start, a ping and two deltas.
	out := feedFixture(t, s, "messages_stream_text.sse", 5)
	if s.Done() {
		t.Error("done before message_stop")
	}
	out = s.Close(out, nil)
	events := readSSE(t, out)
	names := make([]string, len(events))
	for i, ev := range events {
		names[i] = ev.name
	}
	want := "message_start content_block_start ping content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	convWant(t, []byte(events[5].data), "index", "0")
	delta := []byte(events[6].data)
	convWant(t, delta, "delta.stop_reason", "end_turn")
	convAbsent(t, delta, "delivery")
	if got := s.Result().Text; got != "This is a famous philosophical question often used to illustrate medieval" {
		t.Errorf("text %q", got)
	}
}

func TestMessagesStreamClosesEmptyStream(t *testing.T) {
	s := NewMessagesStream("msg_gw3", "router-1")
	events := readSSE(t, s.Close(nil, []byte(`{"tier":"realtime"}`)))
	if len(events) != 3 || events[0].name != "message_start" || events[1].name != "message_delta" || events[2].name != "message_stop" {
		t.Fatalf("events %v", events)
	}
	convWant(t, []byte(events[0].data), "message.id", "msg_gw3")
	convWant(t, []byte(events[1].data), "delivery.tier", "realtime")
	if s.Usage().Known {
		t.Error("usage known for a stream that reported none")
	}
}

func TestMessagesStreamFail(t *testing.T) {
	s := NewMessagesStream("msg_gw4", "router-1")
	out := feedFixture(t, s, "messages_stream_text.sse", 4)
	out = s.Fail(out, `upstream closed "early"`)
	events := readSSE(t, out)
	last := events[len(events)-1]
	if last.name != "error" {
		t.Fatalf("last event %s", last.name)
	}
	if last.data != `{"type":"error","error":{"type":"api_error","message":"upstream closed \"early\""}}` {
		t.Errorf("error data %s", last.data)
	}
	for _, ev := range events {
		if ev.name == "message_stop" {
			t.Error("a failed stream has message_stop")
		}
	}
}

func TestMessagesStreamPassesUpstreamError(t *testing.T) {
	s := NewMessagesStream("msg_gw5", "router-1")
	out := feedFixture(t, s, "messages_stream_error.sse", -1)
	events := readSSE(t, out)
	last := events[len(events)-1]
	if last.name != "error" || !strings.Contains(last.data, `"Overloaded"`) {
		t.Errorf("last event %v", last)
	}
	// The error ended the stream: nothing may follow it.
	if got := s.Close(nil, []byte(`{"tier":"standard"}`)); len(got) != 0 {
		t.Errorf("Close after an error wrote %q", got)
	}
	if got := s.Fail(nil, "again"); len(got) != 0 {
		t.Errorf("Fail after an error wrote %q", got)
	}
}

func TestMessagesStreamKeepsEventsOnOneLine(t *testing.T) {
	s := NewMessagesStream("msg_gw6", "router-1")
	out := s.Event(nil, "content_block_delta", []byte("{\"type\":\"content_block_delta\",\n \"index\":0,\n \"delta\":{\"type\":\"text_delta\",\"text\":\"a\\nb\"}}"))
	if bytes.Count(out, []byte("\n")) != 3 {
		t.Errorf("event written over several lines: %q", out)
	}
	if s.Result().Text != "a\nb" {
		t.Errorf("text %q", s.Result().Text)
	}
}
