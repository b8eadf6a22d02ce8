package translate

import (
	"testing"
)

// responsesBase is a valid responses request that uses every validated
// field; the invalid cases each break one rule of it.
const responsesBase = `{
  "model": "openai/gpt-4.1",
  "instructions": "You are a careful assistant.",
  "input": [
    {"role": "user", "content": [
      {"type": "input_text", "text": "What animal is this?"},
      {"type": "input_image", "image_url": "https://example.com/cat.png"}
    ]},
    {"type": "function_call", "call_id": "call_1", "name": "lookup_weight", "arguments": "{\"animal\":\"cat\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "4.5 kg"}
  ],
  "tools": [{"type": "function", "name": "lookup_weight", "description": "Typical weight", "parameters": {"type": "object"}, "strict": true}],
  "tool_choice": {"type": "function", "name": "lookup_weight"},
  "temperature": 0,
  "top_p": 0.5,
  "max_output_tokens": 300,
  "parallel_tool_calls": false,
  "stream": true,
  "metadata": {"operation_id": "classify_animals"},
  "tier": "standard",
  "tier_strict": false,
  "forbid_atlas_network": true
}`

func responsesInvalidCases(t testing.TB) []invalidCase {
	set := func(path, raw string) string { return withRaw(t, responsesBase, path, raw) }
	return append(bodyCases(), []invalidCase{
		{"model missing", set("model", ""), "model"},
		{"model object", set("model", `{}`), "model"},
		{"input missing", set("input", ""), "input"},
		{"input null", set("input", `null`), "input"},
		{"input number", set("input", `1`), "input"},
		{"input object", set("input", `{"role":"user"}`), "input"},
		{"instructions array", set("instructions", `["a"]`), "instructions"},
		{"tools object", set("tools", `{}`), "tools"},
		{"tool not object", set("tools.0", `"web_search"`), "tools[0]"},
		{"tool type missing", set("tools.0.type", ""), "tools[0].type"},
		{"tool type number", set("tools.0.type", `1`), "tools[0].type"},
		{"tool name number", set("tools.0.name", `1`), "tools[0].name"},
		{"tool description number", set("tools.0.description", `1`), "tools[0].description"},
		{"tool parameters string", set("tools.0.parameters", `"{}"`), "tools[0].parameters"},
		{"tool strict string", set("tools.0.strict", `"true"`), "tools[0].strict"},
		{"temperature above 2", set("temperature", `2.0001`), "temperature"},
		{"top_p above 1", set("top_p", `2`), "top_p"},
		{"max_output_tokens zero", set("max_output_tokens", `0`), "max_output_tokens"},
		{"max_output_tokens fraction", set("max_output_tokens", `2.5`), "max_output_tokens"},
		{"parallel_tool_calls string", set("parallel_tool_calls", `"no"`), "parallel_tool_calls"},
		{"stream string", set("stream", `"yes"`), "stream"},
		{"metadata number", set("metadata", `1`), "metadata"},
		{"operation_id empty", set("metadata.operation_id", `""`), "metadata.operation_id"},
		{"tier unknown", set("tier", `"Batch"`), "tier"},
		{"tier_strict number", set("tier_strict", `0`), "tier_strict"},
		{"forbid_atlas_network string", set("forbid_atlas_network", `"true"`), "forbid_atlas_network"},
		{"stream on batch", set("tier", `"batch"`), "stream"},
	}...)
}

func TestParseResponsesRejects(t *testing.T) {
	runInvalid(t, ParseResponses, responsesInvalidCases(t))
}

func TestParseResponsesAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want Request
	}{
		{
			name: "string input",
			body: `{"model":"openai/gpt-4.1-mini","input":"Tell me a joke."}`,
			want: Request{Dialect: Responses, Model: "openai/gpt-4.1-mini"},
		},
		{
			name: "every validated field",
			body: responsesBase,
			want: Request{Dialect: Responses, Model: "openai/gpt-4.1", Stream: true, Tier: "standard", ForbidAtlasNetwork: true, OperationID: "classify_animals"},
		},
		{
			name: "arbitrary input items, built-in tools and any tool_choice",
			body: `{"model":"router-1","input":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"item_reference","id":"msg_1"},42],"tools":[{"type":"web_search_preview"}],"tool_choice":"required","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"}}},"user":"u-7","tier":"batch"}`,
			want: Request{Dialect: Responses, Model: "router-1", User: "u-7", Tier: "batch"},
		},
		{
			name: "empty input array",
			body: `{"model":"m","input":[]}`,
			want: Request{Dialect: Responses, Model: "m"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseResponses([]byte(tc.body))
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			// The message and tool counts have their own test
			// (TestRequestCounts).
			got.Messages, got.Tools = 0, 0
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func BenchmarkParseResponses(b *testing.B) {
	body := []byte(responsesBase)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseResponses(body); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseResponses(f *testing.F) {
	f.Add([]byte(responsesBase))
	for _, tc := range responsesInvalidCases(f) {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(`{"model":"m","input":[{"role":"user","content":"a"}],"m` + "\xff" + `x":1}`))
	f.Fuzz(func(t *testing.T, body []byte) { fuzzParse(t, ParseResponses, body) })
}
