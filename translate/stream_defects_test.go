package translate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// malformedEvents are upstream events, one dialect's each, that no stream
// may pass on or skip: data that is not JSON (cut short, or not JSON at
// all), JSON that is not an object, and objects without the members their
// type needs.
var malformedEvents = map[Dialect][]sseEvent{
	Chat: {
		{"", `{"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hel`},
		{"", `<html>Bad Gateway</html>`},
		{"", `{"id":"chatcmpl-x","choices":[]}{"id":"chatcmpl-x","choices":[]}`},
		{"", `[{"index":0}]`},
		{"", `{"id":"chatcmpl-x","created":NaN,"choices":[]}`},
		{"", `{"id":"chatcmpl-x" "choices":[]}`},
		{"", `{"id":"chatcmpl-x","choices":{"index":0,"delta":{"content":"x"}}}`},
		{"", `{"id":"chatcmpl-x","choices":[7]}`},
		{"", `{"id":"chatcmpl-x","choices":[{"index":0,"delta":"x"}]}`},
	},
	Messages: {
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hel`},
		{"content_block_delta", `not json`},
		{"content_block_delta", `"content_block_delta"`},
		{"content_block_delta", `{"type":"content_block_delta","index":0}`},
		{"content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`},
		{"content_block_start", `{"type":"content_block_start","index":1,"content_block":"text"}`},
		{"content_block_stop", `{"type":"content_block_stop","index":"0"}`},
		{"message_delta", `{"type":"message_delta","usage":{"output_tokens":3}}`},
	},
	Responses: {
		{"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"hel`},
		{"response.output_text.delta", `data`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":5}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","delta":"x"}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":1}`},
		{"response.completed", `{"type":"response.completed","sequence_number":9}`},
	},
}

// textFixtures are a text stream of each upstream dialect.
var textFixtures = map[Dialect]string{
	Chat:      "chat_stream_text.sse",
	Messages:  "messages_stream_text.sse",
	Responses: "responses_stream_text.sse",
}

// fixtureEvents reads a stream fixture's events.
func fixtureEvents(t *testing.T, name string) []sseEvent {
	t.Helper()
	return readSSE(t, convFixture(t, name))
}

// runDefect runs upstream events through the pipeline the gateway runs (a
// transcoder when the dialects differ, then the client's stream) until one
// is refused, and returns what the client got, ended with Fail the way the
// gateway ends it, and the error.
func runDefect(t *testing.T, upstream, client Dialect, events []sseEvent) ([]sseEvent, error) {
	t.Helper()
	tc := NewTranscoder(upstream, client)
	cs := NewClientStream(client, "gw_0001", "router-1", true)
	var out []byte
	emit := func(event string, data []byte) { out = cs.Event(out, event, data) }
	var err error
	for _, ev := range events {
		if tc == nil {
			emit(ev.name, []byte(ev.data))
			err = cs.Err()
		} else if err = tc.Event(SSEEvent{Event: []byte(ev.name), Data: []byte(ev.data)}, emit); err == nil {
			err = cs.Err()
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		return readSSE(t, cs.Close(out, []byte(pipelineDelivery))), nil
	}
	out = cs.Fail(out, err.Error())
	if more := cs.Close(nil, []byte(pipelineDelivery)); len(more) != 0 {
		t.Errorf("Close after Fail wrote %q", more)
	}
	return readSSE(t, out), err
}

// checkEndsInError checks that a client stream ends with its dialect's
// terminal error event and never claims to be complete.
func checkEndsInError(t *testing.T, client Dialect, events []sseEvent) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	for i, ev := range events {
		if !gjson.Valid(ev.data) {
			t.Fatalf("event %d is not JSON: %q", i, ev.data)
		}
		switch {
		case client == Messages && ev.name == "message_stop",
			client == Responses && ev.name == "response.completed":
			t.Fatalf("event %d claims a complete stream: %s", i, ev.data)
		}
	}
	last := events[len(events)-1]
	switch client {
	case Chat:
		if !gjson.Get(last.data, "error.message").Exists() {
			t.Fatalf("last chunk is not an error: %s", last.data)
		}
	case Messages:
		if last.name != "error" || gjson.Get(last.data, "error.type").Str != "api_error" {
			t.Fatalf("last event %s %s", last.name, last.data)
		}
	case Responses:
		if last.name != "response.failed" || gjson.Get(last.data, "response.status").Str != "failed" ||
			gjson.Get(last.data, "response.id").Str != "gw_0001" {
			t.Fatalf("last event %s %s", last.name, last.data)
		}
	}
}

// TestMalformedUpstreamEventBreaksTheStream: a malformed upstream event in
// the middle of a stream, from every upstream dialect to every client
// dialect, is an error wrapping ErrMalformedEvent; nothing of it or after it
// reaches the client, and the stream ends with the client dialect's error
// event, never with its clean finish.
func TestMalformedUpstreamEventBreaksTheStream(t *testing.T) {
	for upstream, bad := range malformedEvents {
		good := fixtureEvents(t, textFixtures[upstream])
		for _, client := range []Dialect{Chat, Messages, Responses} {
			for i, ev := range bad {
				t.Run(upstream.String()+"->"+client.String()+"/"+string(rune('a'+i)), func(t *testing.T) {
					// Three good events, the bad one, then the rest.
					events := append(append(append([]sseEvent{}, good[:3]...), ev), good[3:]...)
					got, err := runDefect(t, upstream, client, events)
					if !errors.Is(err, ErrMalformedEvent) {
						t.Fatalf("error %v, want a malformed event (%s)", err, ev.data)
					}
					checkEndsInError(t, client, got)
					if msg := got[len(got)-1].data; !strings.Contains(msg, "malformed upstream stream event") {
						t.Errorf("error event does not say what broke: %s", msg)
					}
					for _, c := range got {
						if strings.Contains(c.data, "hel\"") || strings.Contains(c.data, "Bad Gateway") {
							t.Errorf("the malformed event reached the client: %s", c.data)
						}
					}
				})
			}
		}
	}
}

// TestWellFormedStreamsStillComplete: the checks refuse nothing the real
// streams send.
func TestWellFormedStreamsStillComplete(t *testing.T) {
	for _, c := range streamCases {
		if c.failure != "" {
			continue
		}
		for _, client := range []Dialect{Chat, Messages, Responses} {
			if _, err := runDefect(t, c.upstream, client, fixtureEvents(t, c.file)); err != nil {
				t.Errorf("%s -> %s: %v", c.file, client, err)
			}
		}
	}
}

// TestClientStreamIgnoresEventsAfterADefect: once broken, a client stream
// passes nothing more on, and Close ends it with the error event rather
// than a clean finish.
func TestClientStreamIgnoresEventsAfterADefect(t *testing.T) {
	for _, client := range []Dialect{Chat, Messages, Responses} {
		good := fixtureEvents(t, textFixtures[client])
		cs := NewClientStream(client, "gw_0001", "router-1", true)
		var out []byte
		for _, ev := range good[:3] {
			out = cs.Event(out, ev.name, []byte(ev.data))
		}
		bad := malformedEvents[client][0]
		if n := len(out); len(cs.Event(out, bad.name, []byte(bad.data))) != n {
			t.Errorf("%s: the malformed event wrote something", client)
		}
		if !errors.Is(cs.Err(), ErrMalformedEvent) {
			t.Fatalf("%s: Err %v", client, cs.Err())
		}
		n := len(out)
		for _, ev := range good[3:] {
			out = cs.Event(out, ev.name, []byte(ev.data))
		}
		if len(out) != n {
			t.Errorf("%s: events after the defect were passed on: %q", client, out[n:])
		}
		checkEndsInError(t, client, readSSE(t, cs.Close(out, []byte(pipelineDelivery))))
	}
}

// TestChatStreamTellsNotObjectFromNotJSON: valid JSON that is not an object
// is reported as such.
func TestChatStreamTellsNotObjectFromNotJSON(t *testing.T) {
	for data, want := range map[string]error{`[1,2]`: errNotObject, `"x"`: errNotObject, `[1,2`: errNotJSON, ``: errNotJSON, `{}`: nil, ` {"id":"a"} `: nil} {
		s := NewChatStream("gw", "m", true)
		s.Event(nil, "", []byte(data))
		if s.Err() != want {
			t.Errorf("%q: Err %v, want %v", data, s.Err(), want)
		}
	}
}

// frameOK runs objectFrame over data the way ChatStream does.
func frameOK(data []byte) bool {
	f := newObjectFrame(data)
	gjson.Parse(bodyString(data)).ForEach(func(k, v gjson.Result) bool { return f.member(&k, &v) })
	return f.closed()
}

func TestObjectFrame(t *testing.T) {
	good := []string{
		`{}`, ` { } `, "{\n\t\"a\" : 1 ,\r\n\"b\":[1,{\"c\":\"}\"}] }\n",
		`{"id":"x","created":-0.5e+10,"n":0,"t":true,"f":false,"z":null,"s":"a\"b","o":{},"a":[]}`,
		`{"a":1E3,"b":10.25,"c":-7}`,
	}
	bad := []string{
		``, `x`, `[]`, `"s"`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{a:1}`,
		`{"a":1 "b":2}`, `{"a" 1}`, `{"a":1}{"b":2}`, `{"a":1}x`, `{"a":1}}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":falsy}`, `{"a":NaN}`, `{"a":Infinity}`, `{"a":-Infinity}`,
		`{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1.2.3}`, `{"a":+1}`,
		`{"a":[1,2}`, `{"a":{"b":1}`, `{"a":"x}`,
	}
	for _, s := range good {
		if !frameOK([]byte(s)) {
			t.Errorf("refused %q", s)
		}
	}
	for _, s := range bad {
		if frameOK([]byte(s)) {
			t.Errorf("accepted %q", s)
		}
	}
}

// FuzzObjectFrame: the framing check never refuses a valid JSON object,
// and accepts nothing that is not an object.
func FuzzObjectFrame(f *testing.F) {
	for _, name := range []string{"chat_stream_text.sse", "chat_stream_tool.sse", "chat_stream_parallel_tools.sse"} {
		var r SSEReader
		r.Write(convFixture(f, name))
		for ev, ok := r.Next(); ok; ev, ok = r.Next() {
			f.Add(append([]byte(nil), ev.Data...))
		}
	}
	f.Add([]byte(`{"a":1 ,"b": [true,null] , "c":{"d":-1.5e3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ok := frameOK(data)
		valid := json.Valid(data)
		obj := valid && gjson.ParseBytes(data).IsObject()
		if obj && !ok {
			t.Fatalf("refused a valid object %q", data)
		}
		if ok && valid && !obj {
			t.Fatalf("accepted a valid non-object %q", data)
		}
	})
}

func TestValidNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.5": true, "-1.5e-3": true, "2E+7": true, "0.0": true,
		"": false, "-": false, "01": false, "1.": false, ".1": false, "1e": false, "1e+": false, "+1": false,
		"NaN": false, "Infinity": false, "0x10": false, "1_000": false,
	} {
		if validNumber(s) != want {
			t.Errorf("validNumber(%q) = %v", s, !want)
		}
	}
}
