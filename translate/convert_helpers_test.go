package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// convFixture reads a file of testdata.
func convFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// convWant fails the test when a JSON body's value at path is not want (the
// value's raw JSON, or its string for strings).
func convWant(t testing.TB, body []byte, path, want string) {
	t.Helper()
	v := gjson.GetBytes(body, path)
	got := v.Raw
	if v.Type == gjson.String {
		got = v.Str
	}
	if got != want {
		t.Errorf("%s = %s, want %s", path, got, want)
	}
}

// convAbsent fails the test when a JSON body has a value at path.
func convAbsent(t testing.TB, body []byte, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if v := gjson.GetBytes(body, p); v.Exists() {
			t.Errorf("%s = %s, want absent", p, v.Raw)
		}
	}
}

// sseEvent is one event of a client stream, copied out of the reader.
type sseEvent struct {
	name string
	data string
}

// readSSE splits a complete SSE byte stream into events.
func readSSE(t testing.TB, wire []byte) []sseEvent {
	t.Helper()
	var r SSEReader
	r.Write(wire)
	var out []sseEvent
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		out = append(out, sseEvent{name: string(ev.Event), data: string(ev.Data)})
	}
	if r.Buffered() != 0 {
		t.Fatalf("%d bytes after the last event: %q", r.Buffered(), wire[len(wire)-r.Buffered():])
	}
	return out
}

// emitted collects the events a transcoder emits.
type emitted []sseEvent

func (e *emitted) emit(event string, data []byte) {
	*e = append(*e, sseEvent{name: event, data: string(data)})
}

// transcodeFile runs a whole upstream stream fixture through a transcoder and
// returns the client events and the first error.
func transcodeFile(t testing.TB, name string, upstream, client Dialect) (emitted, error) {
	t.Helper()
	tc := NewTranscoder(upstream, client)
	var out emitted
	var r SSEReader
	r.Write(convFixture(t, name))
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		if err := tc.Event(ev, out.emit); err != nil {
			return out, err
		}
	}
	return out, tc.End(out.emit)
}

// names returns the event names of a list of events.
func (e emitted) names() string {
	var b strings.Builder
	for i, ev := range e {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ev.name)
	}
	return b.String()
}

// recorder is a streamWriter that records the steps a parser drives, to read
// back what a client stream said.
type recorder struct {
	began    int
	id       string
	said     strings.Builder
	calls    []ToolCall
	keys     []int
	reason   string
	usage    tokenUsage
	finished int
}

func (r *recorder) begin(id, _ string, _ int64, _ Emit) {
	r.began++
	r.id = id
}
func (r *recorder) text(s string, _ Emit) { r.said.WriteString(s) }
func (r *recorder) toolCall(key int, id, name string, _ Emit) {
	r.keys = append(r.keys, key)
	r.calls = append(r.calls, ToolCall{ID: id, Name: name})
}
func (r *recorder) toolArgs(key int, s string, _ Emit) {
	for i, k := range r.keys {
		if k == key {
			r.calls[i].Arguments += s
		}
	}
}
func (r *recorder) endBlock(Emit)                   {}
func (r *recorder) setFinish(reason string, _ Emit) { r.reason = reason }
func (r *recorder) setUsage(u tokenUsage)           { r.usage = u }
func (r *recorder) reported() tokenUsage            { return r.usage }
func (r *recorder) finish(Emit)                     { r.finished++ }

// parserFor returns a fresh parser of a dialect's stream.
func parserFor(d Dialect) streamParser {
	switch d {
	case Chat:
		return &chatStreamParser{}
	case Messages:
		return &messagesStreamParser{}
	}
	return &responsesStreamParser{}
}

// replay parses client events of dialect d with that dialect's own parser and
// returns what they said, and the error event's message if there was one.
func replay(t testing.TB, d Dialect, events []sseEvent) (*recorder, error) {
	t.Helper()
	rec := &recorder{}
	p := parserFor(d)
	for _, ev := range events {
		if err := p.event(SSEEvent{Event: []byte(ev.name), Data: []byte(ev.data)}, rec, func(string, []byte) {}); err != nil {
			return rec, err
		}
	}
	return rec, nil
}
