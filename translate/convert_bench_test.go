package translate

import (
	"strings"
	"testing"
)

// BenchmarkTranslateRequest translates the ~9 KB agent conversation (system
// prompt, images, four tools, three tool calls and their results) in each
// direction.
func BenchmarkTranslateRequest(b *testing.B) {
	for _, client := range completionDialects {
		body := convFixture(b, agentFixtures[client])
		for _, upstream := range completionDialects {
			if upstream == client {
				continue
			}
			b.Run(client.String()+"->"+upstream.String(), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := translateRequest(client, upstream, body, "upstream-model", true); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkConvertResponse converts a non-stream response with text or a
// tool call in each direction.
func BenchmarkConvertResponse(b *testing.B) {
	bodies := map[Dialect]string{
		Chat:      "chat_response_tool.json",
		Messages:  "messages_response_tools.json",
		Responses: "responses_response_text.json",
	}
	for _, upstream := range completionDialects {
		body := convFixture(b, bodies[upstream])
		for _, client := range completionDialects {
			if upstream == client {
				continue
			}
			b.Run(upstream.String()+"->"+client.String(), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, _, err := ConvertResponse(upstream, client, body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// fiftyEventStream makes a 50-event upstream stream from a text fixture by
// repeating its first text delta in place.
func fiftyEventStream(b *testing.B, name, deltaType string) []byte {
	var r SSEReader
	r.Write(convFixture(b, name))
	var events []sseEvent
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		events = append(events, sseEvent{name: string(ev.Event), data: string(ev.Data)})
	}
	for i, ev := range events {
		if strings.Contains(ev.data, deltaType) {
			for len(events) < 50 {
				events = append(events[:i+1], events[i:]...)
			}
			break
		}
	}
	var wire []byte
	for _, ev := range events[:50] {
		wire = AppendSSE(wire, ev.name, []byte(ev.data))
	}
	return wire
}

// BenchmarkStream runs a 50-event upstream stream through the reader, the
// transcoder and the client's ClientStream, in each direction.
func BenchmarkStream(b *testing.B) {
	streams := map[Dialect][]byte{
		Chat:      fiftyEventStream(b, "chat_stream_text.sse", `"content":"我是"`),
		Messages:  fiftyEventStream(b, "messages_stream_text.sse", `"text_delta"`),
		Responses: fiftyEventStream(b, "responses_stream_text.sse", `"response.output_text.delta"`),
	}
	for _, upstream := range completionDialects {
		wire := streams[upstream]
		for _, client := range completionDialects {
			if upstream == client {
				continue
			}
			b.Run(upstream.String()+"->"+client.String(), func(b *testing.B) {
				b.SetBytes(int64(len(wire)))
				b.ReportAllocs()
				var out []byte
				for b.Loop() {
					tc := NewTranscoder(upstream, client)
					cs := NewClientStream(client, "gw_1", "router-1", true)
					out = out[:0]
					emit := func(event string, data []byte) { out = cs.Event(out, event, data) }
					var r SSEReader
					r.Write(wire)
					for ev, ok := r.Next(); ok; ev, ok = r.Next() {
						if err := tc.Event(ev, emit); err != nil {
							b.Fatal(err)
						}
					}
					_ = tc.End(emit)
					out = cs.Close(out, nil)
				}
			})
		}
	}
}
