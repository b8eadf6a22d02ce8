package demoupstream

import (
	"net/http"
	"strings"
	"testing"
)

// weatherTool is a tool schema with every property type, required listing
// a subset out of property order: arguments follow property order.
const weatherTool = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"metric":{"type":"boolean"},"tags":{"type":"array"},"extra":{"type":"object"}},"required":["metric","city","days"]}`

func TestGoldenStreams(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct {
		file    string
		path    string
		body    string
		headers []string
	}{
		{
			file: "openai_chat_text.sse",
			path: "/v1/chat/completions",
			body: `{"model":"demo-chat","stream":true,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there, world"}]}`,
		},
		{
			file: "openai_chat_usage.sse",
			path: "/v1/chat/completions",
			body: `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say [[words:3]] please"}]}`,
		},
		{
			file: "openai_chat_tool.sse",
			path: "/v1/chat/completions",
			body: `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":` + weatherTool + `}}]}`,
		},
		{
			file: "openai_responses_text.sse",
			path: "/v1/responses",
			body: `{"model":"demo-chat","stream":true,"instructions":"Be brief.","input":"Hello there, world"}`,
		},
		{
			file: "openai_responses_tool.sse",
			path: "/v1/responses",
			body: `{"model":"demo-chat","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"}]}],"tools":[{"type":"function","name":"get_weather","parameters":` + weatherTool + `}]}`,
		},
		{
			file:    "anthropic_text.sse",
			path:    "/v1/messages",
			body:    `{"model":"demo-chat","max_tokens":64,"stream":true,"system":"Be brief.","messages":[{"role":"user","content":"Hello there, world"}]}`,
			headers: anthropicHeaders,
		},
		{
			file:    "anthropic_tool.sse",
			path:    "/v1/messages",
			body:    `{"model":"demo-chat","max_tokens":64,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}],"tools":[{"name":"get_weather","input_schema":` + weatherTool + `}]}`,
			headers: anthropicHeaders,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := call(t, srv, http.MethodPost, tc.path, tc.body, tc.headers...)
			if got.status != http.StatusOK {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type = %q", ct)
			}
			if ce := got.header.Get("Content-Encoding"); ce != "" {
				t.Errorf("stream compressed with %q", ce)
			}
			golden(t, tc.file, got.body)
		})
	}
}
