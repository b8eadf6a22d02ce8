package demoupstream

import (
	"net/http"
	"testing"
)

// responseEnvelope builds the expected non-streamed Response object around
// its output and usage, with the defaults a request without options echoes.
func responseEnvelope(instructions, output, tools string, in, out int) string {
	return `{"id":"resp_ID","object":"response","created_at":1700000000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":` + instructions +
		`,"max_output_tokens":null,"model":"demo-chat","output":[` + output + `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":` + tools +
		`,"top_p":1.0,"truncation":"disabled","usage":{"input_tokens":` + itoa(in) + `,"input_tokens_details":{"cached_tokens":0},"output_tokens":` + itoa(out) + `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":` + itoa(in+out) + `},"user":null,"metadata":{}}`
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func textItem(text string) string {
	return `{"id":"msg_ITEM","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"` + text + `"}],"role":"assistant"}`
}

func TestResponsesBodies(t *testing.T) {
	srv := serve(t, Config{})
	lookup := `[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}}]`
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "string input with instructions",
			body: `{"model":"demo-chat","instructions":"Be brief.","input":"Hello  world"}`,
			want: responseEnvelope(`"Be brief."`, textItem("Echo: Hello world"), "[]", 4, 3),
		},
		{
			name: "message items",
			body: `{"model":"demo-chat","input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"one"},{"type":"input_image","image_url":"https://x/y.png"},{"type":"input_text","text":"two [[words:2]]"}]}]}`,
			want: responseEnvelope("null", textItem("w1 w2"), "[]", 4, 2),
		},
		{
			name: "function call",
			body: `{"model":"demo-chat","input":"find cats","tools":` + lookup + `}`,
			want: responseEnvelope("null", `{"id":"fc_ITEM","type":"function_call","status":"completed","arguments":"{\"q\":\"find cats\"}","call_id":"call_`+callDigest("lookup", `{"q":"find cats"}`)+`","name":"lookup"}`, lookup, 2, 5),
		},
		{
			name: "function call output answered",
			body: `{"model":"demo-chat","input":[{"role":"user","content":"find cats"},{"type":"function_call","call_id":"call_9","name":"lookup","arguments":"{}"},{"type":"function_call_output","call_id":"call_9","output":"three cats"}],"tools":` + lookup + `}`,
			want: responseEnvelope("null", textItem("Tool result: three cats"), lookup, 4, 4),
		},
		{
			name: "output after previous_response_id needs no call in input",
			body: `{"model":"demo-chat","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"call_9","output":[{"type":"input_text","text":"ok"}]}]}`,
			want: `{"id":"resp_ID","object":"response","created_at":1700000000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"demo-chat","output":[` + textItem("Tool result: ok") + `],"parallel_tool_calls":true,"previous_response_id":"resp_1","reasoning":{"effort":null,"summary":null},"service_tier":"default","store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":4},"user":null,"metadata":{}}`,
		},
		{
			name: "echoed options, compacted",
			body: "{\"model\":\"demo-chat\",\"input\":\"x\",\"temperature\":0.2,\"top_p\":0.9,\"max_output_tokens\":50,\"store\":false,\"metadata\":{\n  \"k\": \"v\"\n},\"user\":\"u1\",\"truncation\":\"auto\"}",
			want: `{"id":"resp_ID","object":"response","created_at":1700000000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":50,"model":"demo-chat","output":[` + textItem("Echo: x") + `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":false,"temperature":0.2,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":0.9,"truncation":"auto","usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":3},"user":"u1","metadata":{"k":"v"}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, srv, http.MethodPost, "/v1/responses", tc.body)
			if got.status != http.StatusOK {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if normalize(got.body) != tc.want {
				t.Errorf("body\n got %s\nwant %s", normalize(got.body), tc.want)
			}
		})
	}
}

func TestResponsesValidation(t *testing.T) {
	tests := []struct {
		name   string
		strict bool
		body   string
		want   string
	}{
		{"missing input", false, `{"model":"m"}`,
			`{"message":"Missing required parameter: 'input'.","type":"invalid_request_error","param":"input","code":"missing_required_parameter"}`},
		{"input of the wrong type", false, `{"model":"m","input":5}`,
			`{"message":"Invalid type for 'input': expected a string or an array, but got an integer instead.","type":"invalid_request_error","param":"input","code":"invalid_type"}`},
		{"empty input", false, `{"model":"m","input":[]}`,
			`{"message":"Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.","type":"invalid_request_error","param":"input","code":"empty_array"}`},
		{"missing model", false, `{"input":"x"}`,
			`{"message":"Missing required parameter: 'model'.","type":"invalid_request_error","param":"model","code":"missing_required_parameter"}`},
		{"bad role", false, `{"model":"m","input":[{"role":"tool","content":"x"}]}`,
			`{"message":"Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.","type":"invalid_request_error","param":"input[0].role","code":"invalid_value"}`},
		{"output without a call", false, `{"model":"m","input":[{"role":"user","content":"x"},{"type":"function_call_output","call_id":"call_1","output":"r"}]}`,
			`{"message":"No tool call found for function call output with call_id call_1.","type":"invalid_request_error","param":"input","code":null}`},
		{"temperature too high", false, `{"model":"m","input":"x","temperature":3}`,
			`{"message":"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}`},
		{"function tool without a name", false, `{"model":"m","input":"x","tools":[{"type":"function","parameters":{}}]}`,
			`{"message":"Missing required parameter: 'tools[0].name'.","type":"invalid_request_error","param":"tools[0].name","code":"missing_required_parameter"}`},
		{"tool_choice names a missing tool", false, `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`,
			`{"message":"Invalid value for 'tool_choice': function 'g' is not among the 'tools'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}`},
		{"strict rejects an unknown field", true, `{"model":"m","input":"x","messages":[]}`,
			`{"message":"Unrecognized request argument supplied: messages","type":"invalid_request_error","param":null,"code":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, Config{Strict: tc.strict})
			got := call(t, srv, http.MethodPost, "/v1/responses", tc.body)
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if want := `{"error":` + tc.want + `}`; got.body != want {
				t.Errorf("body\n got %s\nwant %s", got.body, want)
			}
		})
	}
}

func TestResponsesHostedToolsAreNotCalled(t *testing.T) {
	srv := serve(t, Config{})
	got := call(t, srv, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"x","tools":[{"type":"web_search"}]}`)
	if got.status != http.StatusOK || normalize(got.body) != responseEnvelope("null", textItem("Echo: x"), `[{"type":"web_search"}]`, 1, 2) {
		t.Errorf("got %d %s", got.status, got.body)
	}
}
