package translate

import (
	"strings"
	"testing"
)

func TestSSEReaderSplitsAcrossWrites(t *testing.T) {
	wire := "event: message_start\ndata: {\"a\":1}\n\n: ping comment\n\ndata: {\"b\":2}\r\n\r\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n"
	var got []string
	var r SSEReader
	// Feed one byte at a time: every split point must work.
	for i := 0; i < len(wire); i++ {
		r.Write([]byte{wire[i]})
		for {
			ev, ok := r.Next()
			if !ok {
				break
			}
			got = append(got, string(ev.Event)+"|"+string(ev.Data))
		}
	}
	want := []string{"message_start|{\"a\":1}", "|{\"b\":2}", "|line1\nline2", "|[DONE]"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if r.Buffered() != 0 {
		t.Fatalf("buffered %d bytes after a complete stream", r.Buffered())
	}
}

func TestSSEReaderHoldsPartialEvent(t *testing.T) {
	var r SSEReader
	r.Write([]byte("data: {\"x\":"))
	if _, ok := r.Next(); ok {
		t.Fatal("partial event returned")
	}
	r.Write([]byte("1}\n\n"))
	ev, ok := r.Next()
	if !ok || string(ev.Data) != `{"x":1}` {
		t.Fatalf("got %q %v", ev.Data, ok)
	}
}

func TestAppendSSE(t *testing.T) {
	got := string(AppendSSE(nil, "ping", []byte(`{"type":"ping"}`)))
	if got != "event: ping\ndata: {\"type\":\"ping\"}\n\n" {
		t.Fatalf("got %q", got)
	}
	if got := string(AppendSSE(nil, "", []byte("[DONE]"))); got != "data: [DONE]\n\n" {
		t.Fatalf("got %q", got)
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: a\ndata: b\n\n"), 3)
	f.Add([]byte("data: x\r\n\r\ndata: y\n\n"), 1)
	f.Fuzz(func(t *testing.T, wire []byte, step int) {
		if step <= 0 {
			step = 1
		}
		var whole, parts SSEReader
		whole.Write(wire)
		var a, b []string
		for ev, ok := whole.Next(); ok; ev, ok = whole.Next() {
			a = append(a, string(ev.Event)+"\x00"+string(ev.Data))
		}
		for i := 0; i < len(wire); i += step {
			j := min(i+step, len(wire))
			parts.Write(wire[i:j])
			for ev, ok := parts.Next(); ok; ev, ok = parts.Next() {
				b = append(b, string(ev.Event)+"\x00"+string(ev.Data))
			}
		}
		if strings.Join(a, "\x01") != strings.Join(b, "\x01") {
			t.Fatalf("split reads differ: %q vs %q", a, b)
		}
	})
}

// TestSSEReaderLargeEventInSmallWrites: a large event fed a few bytes at a
// time is scanned once, not once per write.
func TestSSEReaderLargeEventInSmallWrites(t *testing.T) {
	line := "data: " + strings.Repeat("x", 200) + "\n"
	wire := strings.Repeat(line, 2000) + "\n"
	var r SSEReader
	events := 0
	for i := 0; i < len(wire); i += 3 {
		r.Write([]byte(wire[i:min(i+3, len(wire))]))
		for _, ok := r.Next(); ok; _, ok = r.Next() {
			events++
		}
	}
	if events != 1 {
		t.Fatalf("%d events", events)
	}
}

func BenchmarkSSEReaderSmallWrites(b *testing.B) {
	wire := []byte(strings.Repeat("data: "+strings.Repeat("x", 200)+"\n", 300) + "\n")
	b.SetBytes(int64(len(wire)))
	for b.Loop() {
		var r SSEReader
		for i := 0; i < len(wire); i += 16 {
			r.Write(wire[i:min(i+16, len(wire))])
			for _, ok := r.Next(); ok; _, ok = r.Next() {
			}
		}
	}
}
