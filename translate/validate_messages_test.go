package translate

import (
	"strings"
	"testing"
)

// messagesBase is a valid messages request that uses every validated field;
// the invalid cases each break one rule of it.
const messagesBase = `{
  "model": "anthropic/claude-sonnet-4-5",
  "max_tokens": 1024,
  "system": [{"type": "text", "text": "You are a careful assistant.", "cache_control": {"type": "ephemeral"}}],
  "messages": [
    {"role": "user", "content": [
      {"type": "text", "text": "What animal is this?"},
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
      {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
    ]},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Let me check."},
      {"type": "tool_use", "id": "toolu_1", "name": "lookup_weight", "input": {"animal": "cat"}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "4.5 kg"}], "is_error": false},
      {"type": "text", "text": "Thanks."}
    ]}
  ],
  "temperature": 1,
  "top_p": 0.95,
  "top_k": 40,
  "stop_sequences": ["</answer>"],
  "stream": false,
  "tools": [{"name": "lookup_weight", "description": "Typical weight", "input_schema": {"type": "object", "properties": {"animal": {"type": "string"}}}}],
  "tool_choice": {"type": "tool", "name": "lookup_weight"},
  "metadata": {"user_id": "user-42", "operation_id": "classify_animals"},
  "tier": "realtime",
  "tier_strict": true,
  "forbid_atlas_network": false
}`

func messagesInvalidCases(t testing.TB) []invalidCase {
	set := func(path, raw string) string { return withRaw(t, messagesBase, path, raw) }
	return append(bodyCases(), []invalidCase{
		{"model missing", set("model", ""), "model"},
		{"model array", set("model", `["m"]`), "model"},
		{"messages missing", set("messages", ""), "messages"},
		{"messages string", set("messages", `"hi"`), "messages"},
		{"messages empty", set("messages", `[]`), "messages"},
		{"message not object", set("messages.0", `1`), "messages[0]"},
		{"role missing", set("messages.0.role", ""), "messages[0].role"},
		{"role unknown", set("messages.0.role", `"tool"`), "messages[0].role"},
		{"content missing", set("messages.0.content", ""), "messages[0].content"},
		{"content null", set("messages.0.content", `null`), "messages[0].content"},
		{"content number", set("messages.0.content", `3`), "messages[0].content"},
		{"block not object", set("messages.0.content.0", `"text"`), "messages[0].content[0]"},
		{"block type missing", set("messages.0.content.0.type", ""), "messages[0].content[0].type"},
		{"block type number", set("messages.0.content.0.type", `7`), "messages[0].content[0].type"},
		{"text missing", set("messages.0.content.0.text", ""), "messages[0].content[0].text"},
		{"text number", set("messages.0.content.0.text", `1`), "messages[0].content[0].text"},
		{"image source missing", set("messages.0.content.1.source", ""), "messages[0].content[1].source"},
		{"image source string", set("messages.0.content.1.source", `"x"`), "messages[0].content[1].source"},
		{"source type missing", set("messages.0.content.1.source.type", ""), "messages[0].content[1].source.type"},
		{"source type unknown", set("messages.0.content.1.source.type", `"file"`), "messages[0].content[1].source.type"},
		{"source media_type number", set("messages.0.content.1.source.media_type", `1`), "messages[0].content[1].source.media_type"},
		{"base64 data missing", set("messages.0.content.1.source.data", ""), "messages[0].content[1].source.data"},
		{"url source url missing", set("messages.0.content.2.source.url", ""), "messages[0].content[2].source.url"},
		{"url source url relative", set("messages.0.content.2.source.url", `"cat.png"`), "messages[0].content[2].source.url"},
		{"tool_use id missing", set("messages.1.content.1.id", ""), "messages[1].content[1].id"},
		{"tool_use name missing", set("messages.1.content.1.name", ""), "messages[1].content[1].name"},
		{"tool_use name number", set("messages.1.content.1.name", `1`), "messages[1].content[1].name"},
		{"tool_use input string", set("messages.1.content.1.input", `"{}"`), "messages[1].content[1].input"},
		{"tool_result id missing", set("messages.2.content.0.tool_use_id", ""), "messages[2].content[0].tool_use_id"},
		{"tool_result content number", set("messages.2.content.0.content", `1`), "messages[2].content[0].content"},
		{"tool_result nested image without source", set("messages.2.content.0.content.0", `{"type":"image"}`), "messages[2].content[0].content[0].source"},
		{"tool_result nested text missing", set("messages.2.content.0.content.0.text", ""), "messages[2].content[0].content[0].text"},
		{"tool_result is_error string", set("messages.2.content.0.is_error", `"no"`), "messages[2].content[0].is_error"},
		{"max_tokens missing", set("max_tokens", ""), "max_tokens"},
		{"max_tokens null", set("max_tokens", `null`), "max_tokens"},
		{"max_tokens zero", set("max_tokens", `0`), "max_tokens"},
		{"max_tokens fraction", set("max_tokens", `10.5`), "max_tokens"},
		{"system number", set("system", `1`), "system"},
		{"system block not object", set("system.0", `"text"`), "system[0]"},
		{"system block not text", set("system.0.type", `"image"`), "system[0].type"},
		{"system block text missing", set("system.0.text", ""), "system[0].text"},
		{"temperature above 2", set("temperature", `3`), "temperature"},
		{"top_p negative", set("top_p", `-1`), "top_p"},
		{"top_k negative", set("top_k", `-1`), "top_k"},
		{"top_k fraction", set("top_k", `0.5`), "top_k"},
		{"stop_sequences string", set("stop_sequences", `"END"`), "stop_sequences"},
		{"stop_sequences item number", set("stop_sequences.0", `1`), "stop_sequences[0]"},
		{"stream number", set("stream", `1`), "stream"},
		{"tools object", set("tools", `{}`), "tools"},
		{"tool not object", set("tools.0", `[]`), "tools[0]"},
		{"tool name missing", set("tools.0.name", ""), "tools[0].name"},
		{"tool description number", set("tools.0.description", `1`), "tools[0].description"},
		{"tool input_schema string", set("tools.0.input_schema", `"object"`), "tools[0].input_schema"},
		{"tool_choice string", set("tool_choice", `"auto"`), "tool_choice"},
		{"tool_choice type missing", set("tool_choice.type", ""), "tool_choice.type"},
		{"tool_choice type unknown", set("tool_choice.type", `"none"`), "tool_choice.type"},
		{"tool_choice tool without name", set("tool_choice.name", ""), "tool_choice.name"},
		{"tool_choice name number", withRaw(t, set("tool_choice.type", `"auto"`), "tool_choice.name", `1`), "tool_choice.name"},
		{"metadata array", set("metadata", `[]`), "metadata"},
		{"user_id number", set("metadata.user_id", `42`), "metadata.user_id"},
		{"operation_id too long", set("metadata.operation_id", `"`+strings.Repeat("x", 129)+`"`), "metadata.operation_id"},
		{"tier unknown", set("tier", `"priority"`), "tier"},
		{"tier_strict string", set("tier_strict", `"true"`), "tier_strict"},
		{"forbid_atlas_network string", set("forbid_atlas_network", `"no"`), "forbid_atlas_network"},
		{"stream on batch", withRaw(t, set("stream", `true`), "tier", `"batch"`), "stream"},
	}...)
}

func TestParseMessagesRejects(t *testing.T) {
	runInvalid(t, ParseMessages, messagesInvalidCases(t))
}

func TestParseMessagesAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want Request
	}{
		{
			name: "minimal",
			body: `{"model":"anthropic/claude-haiku-4-5","max_tokens":256,"messages":[{"role":"user","content":"Hello"}]}`,
			want: Request{Dialect: Messages, Model: "anthropic/claude-haiku-4-5"},
		},
		{
			name: "every validated field",
			body: messagesBase,
			want: Request{Dialect: Messages, Model: "anthropic/claude-sonnet-4-5", Tier: "realtime", TierStrict: true, OperationID: "classify_animals", User: "user-42"},
		},
		{
			name: "streaming agent turn",
			body: `{"model":"router-1","max_tokens":8192,"stream":true,"system":"Be brief.","tool_choice":{"type":"auto"},"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"List files"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"a.go\nb.go"}]}],"tools":[{"name":"ls","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":3}]}`,
			want: Request{Dialect: Messages, Model: "router-1", Stream: true},
		},
		{
			name: "blocks of other types pass through",
			body: `{"model":"m","max_tokens":64,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"f_1"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"Look it up.","signature":"EqQBCkYIBxgC"},{"type":"redacted_thinking","data":"ZXhhbXBsZQ=="},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"Found it."}]},{"role":"user","content":"thanks"}]}`,
			want: Request{Dialect: Messages, Model: "m"},
		},
		{
			name: "system role message and top_k zero",
			body: `{"model":"m","max_tokens":1,"top_k":0,"messages":[{"role":"system","content":"Rules."},{"role":"user","content":"hi"}],"tool_choice":{"type":"any"}}`,
			want: Request{Dialect: Messages, Model: "m"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMessages([]byte(tc.body))
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

func BenchmarkParseMessages(b *testing.B) {
	body := []byte(messagesBase)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMessages(body); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseMessages(f *testing.F) {
	f.Add([]byte(messagesBase))
	for _, tc := range messagesInvalidCases(f) {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"` + "\xed\xa0\x80" + `"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) { fuzzParse(t, ParseMessages, body) })
}
