package demoupstream

import (
	"net/http"
	"testing"
)

// messageEnvelope builds the expected non-streamed message around its block.
func messageEnvelope(block, stop string, in, out int) string {
	return `{"id":"msg_ID","type":"message","role":"assistant","model":"demo-chat","content":[` + block + `],"stop_reason":"` + stop +
		`","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":` + itoa(in) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + itoa(out) + `,"service_tier":"standard"}}`
}

func TestMessagesBodies(t *testing.T) {
	srv := serve(t, Config{})
	weather := `[{"name":"get_weather","description":"d","input_schema":{"type":"object","properties":{"city":{"type":"string"},"units":{"type":["string","null"]},"days":{"type":"integer"}},"required":["days","city"]}},{"name":"get_time","input_schema":{"type":"object","properties":{"utc":{"type":"boolean"}}}}]`
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "echo with system blocks",
			body: `{"model":"demo-chat","max_tokens":64,"system":[{"type":"text","text":"Be kind."}],"messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"there"}]}]}`,
			want: messageEnvelope(`{"type":"text","text":"Echo: Hi there"}`, "end_turn", 4, 3),
		},
		{
			name: "prefilled assistant turn",
			body: `{"model":"demo-chat","max_tokens":64,"system":"s","messages":[{"role":"user","content":"question [[words:2]]"},{"role":"assistant","content":"Answer:"}]}`,
			want: messageEnvelope(`{"type":"text","text":"w1 w2"}`, "end_turn", 4, 2),
		},
		{
			name: "tool use",
			body: `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"Rome"}],"tools":` + weather + `}`,
			want: messageEnvelope(`{"type":"tool_use","id":"toolu_`+callDigest("get_weather", `{"city":"Rome","days":42}`)+`","name":"get_weather","input":{"city":"Rome","days":42}}`, "tool_use", 1, 7),
		},
		{
			name: "named tool",
			body: `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"Rome"}],"tools":` + weather + `,"tool_choice":{"type":"tool","name":"get_time"}}`,
			want: messageEnvelope(`{"type":"tool_use","id":"toolu_`+callDigest("get_time", `{"utc":true}`)+`","name":"get_time","input":{"utc":true}}`, "tool_use", 1, 3),
		},
		{
			name: "tool_choice none",
			body: `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"Rome"}],"tools":` + weather + `,"tool_choice":{"type":"none"}}`,
			want: messageEnvelope(`{"type":"text","text":"Echo: Rome"}`, "end_turn", 1, 2),
		},
		{
			name: "tool result",
			body: `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"Rome"},{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny,"},{"type":"text","text":"25 C"}]}]}],"tools":` + weather + `}`,
			want: messageEnvelope(`{"type":"text","text":"Tool result: sunny, 25 C"}`, "end_turn", 5, 5),
		},
		{
			name: "string tool result",
			body: `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"Rome"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"rain"}]}]}`,
			want: messageEnvelope(`{"type":"text","text":"Tool result: rain"}`, "end_turn", 2, 3),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, srv, http.MethodPost, "/v1/messages", tc.body, anthropicHeaders...)
			if got.status != http.StatusOK {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if normalize(got.body) != tc.want {
				t.Errorf("body\n got %s\nwant %s", normalize(got.body), tc.want)
			}
		})
	}
}

func TestMessagesValidation(t *testing.T) {
	tests := []struct {
		name   string
		strict bool
		body   string
		want   string // error.message
	}{
		{"missing model", false, `{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "model: Field required"},
		{"missing max_tokens", false, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens: Field required"},
		{"fractional max_tokens", false, `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`, "max_tokens: Input should be a valid integer"},
		{"string max_tokens", false, `{"model":"m","max_tokens":"5","messages":[{"role":"user","content":"x"}]}`, "max_tokens: Input should be a valid integer"},
		{"zero max_tokens", false, `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, "max_tokens: Input should be greater than or equal to 1"},
		{"missing messages", false, `{"model":"m","max_tokens":5}`, "messages: Field required"},
		{"messages not a list", false, `{"model":"m","max_tokens":5,"messages":{}}`, "messages: Input should be a valid list"},
		{"empty messages", false, `{"model":"m","max_tokens":5,"messages":[]}`, "messages: List should have at least 1 item after validation, not 0"},
		{"system role", false, `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]}`, "messages.0.role: Input should be 'user' or 'assistant'"},
		{"missing content", false, `{"model":"m","max_tokens":5,"messages":[{"role":"user"}]}`, "messages.0.content: Field required"},
		{"temperature above 1", false, `{"model":"m","max_tokens":5,"temperature":1.5,"messages":[{"role":"user","content":"x"}]}`, "temperature: Input should be less than or equal to 1"},
		{"negative temperature", false, `{"model":"m","max_tokens":5,"temperature":-0.1,"messages":[{"role":"user","content":"x"}]}`, "temperature: Input should be greater than or equal to 0"},
		{"stream not a boolean", false, `{"model":"m","max_tokens":5,"stream":1,"messages":[{"role":"user","content":"x"}]}`, "stream: Input should be a valid boolean"},
		{"tool_result without tool_use", false, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}]}`,
			"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_result with another id", false, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"see"},{"type":"tool_result","tool_use_id":"toolu_2","content":"r"}]}]}`,
			"messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_use not answered", false, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":"never mind"}]}`,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"tool without a name", false, `{"model":"m","max_tokens":5,"tools":[{"input_schema":{}}],"messages":[{"role":"user","content":"x"}]}`, "tools.0.name: Field required"},
		{"tool_choice names a missing tool", false, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"g"},"messages":[{"role":"user","content":"x"}]}`, "tool_choice.tool.name: Tool 'g' not found in tools"},
		{"tool_choice bad type", false, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"sometimes"},"messages":[{"role":"user","content":"x"}]}`, "tool_choice: Input tag 'sometimes' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"},
		{"strict rejects an unknown field", true, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tier_strict":true}`, "tier_strict: Extra inputs are not permitted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, Config{Strict: tc.strict})
			got := call(t, srv, http.MethodPost, "/v1/messages", tc.body, anthropicHeaders...)
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			want := `{"type":"error","error":{"type":"invalid_request_error","message":` + string(appendString(nil, tc.want)) + `},"request_id":"req_ID"}`
			if normalize(got.body) != want {
				t.Errorf("body\n got %s\nwant %s", got.body, want)
			}
		})
	}
}

func TestMessagesLenientMode(t *testing.T) {
	srv := serve(t, Config{})
	got := call(t, srv, http.MethodPost, "/v1/messages", `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tier":"batch"}`, anthropicHeaders...)
	if got.status != http.StatusOK {
		t.Errorf("non-strict mode rejected an unknown field: %d %s", got.status, got.body)
	}
	strict := serve(t, Config{Strict: true})
	got = call(t, strict, http.MethodPost, "/v1/messages", `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":{"user_id":"u"},"stop_sequences":["x"],"top_k":3,"top_p":0.5,"temperature":1}`, anthropicHeaders...)
	if got.status != http.StatusOK {
		t.Errorf("strict mode rejected known fields: %d %s", got.status, got.body)
	}
}
