package demoupstream

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

const chatUsageTail = `,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`

func TestChatCompletionBodies(t *testing.T) {
	srv := serve(t, Config{})
	getWeather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	getTime := `{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"utc":{"type":"boolean"},"zone":{"type":"string"}}}}}`
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "echo, system and directives counted as input",
			body: `{"model":"demo-chat","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":[{"type":"text","text":"Hello"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"  big   world [[sleep:1]]"}]}]}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":"Echo: Hello big world","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "words directive",
			body: `{"model":"demo-mini","messages":[{"role":"user","content":"[[words:5]]"}]}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-mini","choices":[{"index":0,"message":{"role":"assistant","content":"w1 w2 w3 w4 w5","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":5,"total_tokens":6` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "first tool called",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"Weather in \"Oslo\"?"}],"tools":[` + getWeather + `,` + getTime + `]}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_` + callDigest("get_weather", `{"city":"Weather in \"Oslo\"?"}`) + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Weather in \\\"Oslo\\\"?\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":8,"total_tokens":11` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "named tool called",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"time"}],"tools":[` + getWeather + `,` + getTime + `],"tool_choice":{"type":"function","function":{"name":"get_time"}}}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_` + callDigest("get_time", `{"utc":true,"zone":"time"}`) + `","type":"function","function":{"name":"get_time","arguments":"{\"utc\":true,\"zone\":\"time\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":7,"total_tokens":8` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "tool_choice none answers",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}],"tools":[` + getWeather + `],"tool_choice":"none"}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":"Echo: hi","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "tool result answered",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"-3 C,"},{"type":"text","text":"snow"}]}],"tools":[` + getWeather + `]}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":"Tool result: -3 C, snow","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":6,"completion_tokens":5,"total_tokens":11` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
		{
			name: "last user text skips assistant and tool turns",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"reply"},{"role":"developer","content":"note"}]}`,
			want: `{"id":"chatcmpl-ID","object":"chat.completion","created":1700000000,"model":"demo-chat","choices":[{"index":0,"message":{"role":"assistant","content":"Echo: first","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5` + chatUsageTail + `,"service_tier":"default","system_fingerprint":null}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, srv, http.MethodPost, "/v1/chat/completions", tc.body)
			if got.status != http.StatusOK {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if got.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", got.header.Get("Content-Type"))
			}
			if normalize(got.body) != tc.want {
				t.Errorf("body\n got %s\nwant %s", normalize(got.body), tc.want)
			}
		})
	}
}

func TestChatValidation(t *testing.T) {
	tests := []struct {
		name   string
		strict bool
		body   string
		want   string // the error object
	}{
		{"missing model", false, `{"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Missing required parameter: 'model'.","type":"invalid_request_error","param":"model","code":"missing_required_parameter"}`},
		{"model not a string", false, `{"model":3,"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid type for 'model': expected a string, but got an integer instead.","type":"invalid_request_error","param":"model","code":"invalid_type"}`},
		{"missing messages", false, `{"model":"m"}`,
			`{"message":"Missing required parameter: 'messages'.","type":"invalid_request_error","param":"messages","code":"missing_required_parameter"}`},
		{"messages not an array", false, `{"model":"m","messages":"hi"}`,
			`{"message":"Invalid type for 'messages': expected an array, but got a string instead.","type":"invalid_request_error","param":"messages","code":"invalid_type"}`},
		{"empty messages", false, `{"model":"m","messages":[]}`,
			`{"message":"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.","type":"invalid_request_error","param":"messages","code":"empty_array"}`},
		{"missing role", false, `{"model":"m","messages":[{"content":"x"}]}`,
			`{"message":"Missing required parameter: 'messages[0].role'.","type":"invalid_request_error","param":"messages[0].role","code":"missing_required_parameter"}`},
		{"bad role", false, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"robot","content":"x"}]}`,
			`{"message":"Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.","type":"invalid_request_error","param":"messages[1].role","code":"invalid_value"}`},
		{"temperature too high", false, `{"model":"m","temperature":2.5,"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}`},
		{"temperature too low", false, `{"model":"m","temperature":-1,"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.","type":"invalid_request_error","param":"temperature","code":"decimal_below_min_value"}`},
		{"temperature not a number", false, `{"model":"m","temperature":"hot","messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid type for 'temperature': expected a decimal, but got a string instead.","type":"invalid_request_error","param":"temperature","code":"invalid_type"}`},
		{"tool message without tool calls", false, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_1","content":"r"}]}`,
			`{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages.[1].role","code":null}`},
		{"tool message with an unknown id", false, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_2","content":"r"}]}`,
			`{"message":"Invalid parameter: 'tool_call_id' of 'call_2' not found in 'tool_calls' of previous message.","type":"invalid_request_error","param":"messages.[2].tool_call_id","code":null}`},
		{"tool call left unanswered", false, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_2","content":"r"},{"role":"user","content":"y"}]}`,
			`{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1","type":"invalid_request_error","param":"messages.[1].role","code":null}`},
		{"stream_options without stream", false, `{"model":"m","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"The 'stream_options' parameter is only allowed when 'stream' is enabled.","type":"invalid_request_error","param":"stream_options","code":"invalid_value"}`},
		{"stream not a boolean", false, `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid type for 'stream': expected a boolean, but got a string instead.","type":"invalid_request_error","param":"stream","code":"invalid_type"}`},
		{"tool_choice without tools", false, `{"model":"m","tool_choice":"auto","messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.","type":"invalid_request_error","param":"tool_choice","code":null}`},
		{"tool_choice bad string", false, `{"model":"m","tool_choice":"always","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid value: 'always'. Supported values are: 'none', 'auto', and 'required'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}`},
		{"tool_choice names a missing tool", false, `{"model":"m","tool_choice":{"type":"function","function":{"name":"g"}},"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid value for 'tool_choice': function 'g' is not among the 'tools'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}`},
		{"empty tools", false, `{"model":"m","tools":[],"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.","type":"invalid_request_error","param":"tools","code":"empty_array"}`},
		{"tool without a name", false, `{"model":"m","tools":[{"type":"function","function":{"parameters":{}}}],"messages":[{"role":"user","content":"x"}]}`,
			`{"message":"Missing required parameter: 'tools[0].function.name'.","type":"invalid_request_error","param":"tools[0].function.name","code":"missing_required_parameter"}`},
		{"strict rejects an unknown field", true, `{"model":"m","messages":[{"role":"user","content":"x"}],"tier":"batch"}`,
			`{"message":"Unrecognized request argument supplied: tier","type":"invalid_request_error","param":null,"code":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, Config{Strict: tc.strict})
			got := call(t, srv, http.MethodPost, "/v1/chat/completions", tc.body)
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if want := `{"error":` + tc.want + `}`; got.body != want {
				t.Errorf("body\n got %s\nwant %s", got.body, want)
			}
		})
	}
}

func TestChatLenientMode(t *testing.T) {
	srv := serve(t, Config{})
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"tier":"batch","forbid_atlas_network":true,"metadata":{"operation_id":"op"}}`
	got := call(t, srv, http.MethodPost, "/v1/chat/completions", body)
	if got.status != http.StatusOK {
		t.Errorf("non-strict mode rejected unknown fields: %d %s", got.status, got.body)
	}
	// Known fields pass in strict mode too.
	strict := serve(t, Config{Strict: true})
	body = `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":0,"top_p":1,"max_tokens":5,"stop":["\n"],"seed":1,"user":"u","n":1,"stream":false}`
	if got := call(t, strict, http.MethodPost, "/v1/chat/completions", body); got.status != http.StatusOK {
		t.Errorf("strict mode rejected known fields: %d %s", got.status, got.body)
	}
}

func TestChatConversationEndingInAssistantToolCalls(t *testing.T) {
	// Calls still open at the end are not an error: the model is asked to
	// go on from there, and with tools it calls again.
	srv := serve(t, Config{})
	body := `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`
	got := call(t, srv, http.MethodPost, "/v1/chat/completions", body)
	if got.status != http.StatusOK || gjson.Get(got.body, "choices.0.message.content").String() != "Echo: x" {
		t.Errorf("got %d %s", got.status, got.body)
	}
}
