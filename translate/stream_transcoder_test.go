package translate

import (
	"testing"
)

func TestTranscoderEndClosesOpenStream(t *testing.T) {
	// An upstream that stops after a few deltas, with no terminal event:
	// End gives every client shape its closing events.
	for _, client := range []Dialect{Chat, Responses} {
		tc := NewTranscoder(Messages, client)
		var out emitted
		var r SSEReader
		r.Write(convFixture(t, "messages_stream_text.sse"))
		for i := 0; i < 5; i++ {
			ev, _ := r.Next()
			if err := tc.Event(ev, out.emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := tc.End(out.emit); err != nil {
			t.Fatal(err)
		}
		n := len(out)
		if err := tc.End(out.emit); err != nil || len(out) != n {
			t.Errorf("%s: a second End wrote more", client)
		}
		last := []byte(out[n-1].data)
		switch client {
		case Chat:
			// The finish chunk, then the usage message_start reported.
			convWant(t, []byte(out[n-2].data), "choices.0.finish_reason", "stop")
			convWant(t, last, "usage.prompt_tokens", "18")
		case Responses:
			convWant(t, last, "type", "response.completed")
			convWant(t, last, "response.output.0.content.0.text", "This is a famous philosophical question often used to illustrate medieval")
		}
	}
}

func TestTranscoderBeginsLazily(t *testing.T) {
	// A responses upstream that never sent response.created.
	tc := NewTranscoder(Responses, Messages)
	var out emitted
	if err := tc.Event(SSEEvent{Data: []byte(`{"type":"response.output_text.delta","output_index":0,"delta":"hi"}`)}, out.emit); err != nil {
		t.Fatal(err)
	}
	if got := out.names(); got != "message_start content_block_start content_block_delta" {
		t.Errorf("events %s", got)
	}
}

func TestUpstreamStreamError(t *testing.T) {
	if got := (&upstreamStreamError{message: "Overloaded"}).Error(); got != "upstream stream error: Overloaded" {
		t.Errorf("got %q", got)
	}
	if got := (&upstreamStreamError{}).Error(); got != "upstream stream error" {
		t.Errorf("got %q", got)
	}
}
