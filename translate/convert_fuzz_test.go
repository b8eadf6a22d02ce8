package translate

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

// The fuzz targets feed arbitrary bytes, seeded with the real wire fixtures,
// to every request translator, response converter and stream transcoder:
// none may panic, and whatever they produce must be valid JSON (and, for
// streams, valid SSE with JSON data).

func fuzzRequest(f *testing.F, client Dialect, seeds ...string) {
	f.Add(convFixture(f, agentFixtures[client]))
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, upstream := range completionDialects {
			if upstream == client {
				continue
			}
			for _, stream := range []bool{false, true} {
				out, err := translateRequest(client, upstream, body, "m", stream)
				if err != nil {
					continue
				}
				if !json.Valid(out) {
					t.Fatalf("%s -> %s: invalid JSON %s", client, upstream, out)
				}
				for _, p := range gatewayOnly {
					if gjson.GetBytes(out, p).Exists() {
						t.Fatalf("%s -> %s: %s reached the upstream: %s", client, upstream, p, out)
					}
				}
			}
		}
	})
}

func FuzzRequestFromChat(f *testing.F) {
	fuzzRequest(f, Chat,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"data:image/png,%41"}]},{"role":"tool","tool_call_id":"a:b","content":[{"type":"text","text":"r"}]}],"metadata":{"operation_id":"x","k":"v"},"tier":"batch"}`,
		`{"messages":"x","tools":"y","stop":3,"temperature":"hot"}`)
}

func FuzzRequestFromMessages(f *testing.F) {
	fuzzRequest(f, Messages,
		`{"model":"m","max_tokens":1,"system":[{"type":"text","text":"s"}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":[1]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}],"tool_choice":{"type":"tool","name":"n","disable_parallel_tool_use":true}}`,
		`{"messages":[{"role":"user","content":7}],"metadata":"x"}`)
}

func FuzzRequestFromResponses(f *testing.F) {
	fuzzRequest(f, Responses,
		`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"data:image/gif;base64,R0"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{"}],"text":{"format":{"type":"json_schema","name":"n","schema":{}}},"max_output_tokens":1}`,
		`{"input":{"role":"user"},"instructions":5}`)
}

func fuzzResponse(f *testing.F, upstream Dialect, files []string, seeds ...string) {
	for _, name := range files {
		f.Add(convFixture(f, name))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, client := range completionDialects {
			if client == upstream {
				continue
			}
			out, _, _, err := ConvertResponse(upstream, client, body)
			if err == nil && !json.Valid(out) {
				t.Fatalf("%s -> %s: invalid JSON %s", upstream, client, out)
			}
		}
	})
}

func FuzzResponseFromChat(f *testing.F) {
	fuzzResponse(f, Chat, []string{"chat_response_tool.json", "chat_response_text.json"},
		`{"choices":[{"message":{"content":[{"text":"a"}],"tool_calls":[{"function":{"arguments":"{\"a\":"}}]}}]}`)
}

func FuzzResponseFromMessages(f *testing.F) {
	fuzzResponse(f, Messages, []string{"messages_response_tools.json", "messages_response_text.json"},
		`{"content":[{"type":"tool_use","input":"x"}],"usage":{"input_tokens":1,"cache_read_input_tokens":5}}`)
}

func FuzzResponseFromResponses(f *testing.F) {
	fuzzResponse(f, Responses, []string{"responses_response_tool.json", "responses_response_text.json"},
		`{"output":[{"type":"message","content":"x"}],"status":"incomplete"}`)
}

// fuzzStream runs arbitrary upstream bytes through the whole pipeline to each
// client dialect. A chat client is only reached through a transcoder here:
// the ChatStream passes a same-dialect upstream's chunks on as they came.
// Writes are of 64 bytes or more: the SSE reader rescans a pending event on
// each write, so byte-sized writes of a large mutated input cost quadratic
// time without reaching more of the transcoders (TestStreamPipeline writes
// every fixture a byte at a time, and FuzzSSEReader covers split points).
func fuzzStream(f *testing.F, upstream Dialect, files ...string) {
	for _, name := range files {
		f.Add(convFixture(f, name), uint8(0))
	}
	f.Fuzz(func(t *testing.T, wire []byte, step uint8) {
		for _, client := range completionDialects {
			if client == upstream && client == Chat {
				continue
			}
			out, _ := runWire(t, wire, upstream, client, 64+int(step))
			var r SSEReader
			r.Write(out)
			for ev, ok := r.Next(); ok; ev, ok = r.Next() {
				if string(ev.Data) != "[DONE]" && !json.Valid(ev.Data) {
					t.Fatalf("%s -> %s: event data is not JSON: %q", upstream, client, ev.Data)
				}
			}
			if r.Buffered() != 0 {
				t.Fatalf("%s -> %s: output is not whole SSE events: %q", upstream, client, out)
			}
		}
	})
}

func FuzzStreamFromChat(f *testing.F) {
	fuzzStream(f, Chat, "chat_stream_text.sse", "chat_stream_tool.sse", "chat_stream_parallel_tools.sse")
}

func FuzzStreamFromMessages(f *testing.F) {
	fuzzStream(f, Messages, "messages_stream_text.sse", "messages_stream_tools.sse", "messages_stream_error.sse")
}

func FuzzStreamFromResponses(f *testing.F) {
	fuzzStream(f, Responses, "responses_stream_text.sse", "responses_stream_tools.sse", "responses_stream_failed.sse", "responses_stream_error.sse")
}
