package translate

import (
	"fmt"
	"strings"
	"testing"
)

// chatBase is a valid chat request that uses every validated field; the
// invalid cases each break one rule of it.
const chatBase = `{
  "model": "router-1",
  "messages": [
    {"role": "system", "content": "You are a careful assistant.", "name": "sys"},
    {"role": "user", "content": [
      {"type": "text", "text": "What animal is this, and what does it weigh?"},
      {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}}
    ]},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "lookup_weight", "arguments": "{\"animal\":\"cat\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "4.5 kg"}
  ],
  "temperature": 0.7,
  "top_p": 1,
  "max_tokens": 512,
  "max_completion_tokens": 512,
  "stream": false,
  "stop": ["\n\n"],
  "presence_penalty": 0,
  "frequency_penalty": -0.5,
  "user": "user-42",
  "metadata": {"operation_id": "classify_animals", "team": "vision"},
  "tier": "standard",
  "tier_strict": false,
  "forbid_atlas_network": true,
  "tools": [{"type": "function", "function": {"name": "lookup_weight", "description": "Typical weight", "parameters": {"type": "object", "properties": {"animal": {"type": "string"}}}}}]
}`

func chatInvalidCases(t testing.TB) []invalidCase {
	set := func(path, raw string) string { return withRaw(t, chatBase, path, raw) }
	return append(bodyCases(), []invalidCase{
		{"model missing", set("model", ""), "model"},
		{"model null", set("model", `null`), "model"},
		{"model number", set("model", `4`), "model"},
		{"messages missing", set("messages", ""), "messages"},
		{"messages object", set("messages", `{"role":"user"}`), "messages"},
		{"messages empty", set("messages", `[]`), "messages"},
		{"message not object", set("messages.0", `"hi"`), "messages[0]"},
		{"role missing", set("messages.1.role", ""), "messages[1].role"},
		{"role unknown", set("messages.1.role", `"human"`), "messages[1].role"},
		{"role number", set("messages.1.role", `1`), "messages[1].role"},
		{"content number", set("messages.3.content", `42`), "messages[3].content"},
		{"content object", set("messages.3.content", `{"text":"x"}`), "messages[3].content"},
		{"part not object", set("messages.1.content.0", `"text"`), "messages[1].content[0]"},
		{"part type missing", set("messages.1.content.0.type", ""), "messages[1].content[0].type"},
		{"part type unknown", set("messages.1.content.0.type", `"input_audio"`), "messages[1].content[0].type"},
		{"text missing", set("messages.1.content.0.text", ""), "messages[1].content[0].text"},
		{"text not string", set("messages.1.content.0.text", `["a"]`), "messages[1].content[0].text"},
		{"image_url missing", set("messages.1.content.1.image_url", ""), "messages[1].content[1].image_url"},
		{"image_url string", set("messages.1.content.1.image_url", `"https://example.com/cat.png"`), "messages[1].content[1].image_url"},
		{"url missing", set("messages.1.content.1.image_url.url", ""), "messages[1].content[1].image_url.url"},
		{"url number", set("messages.1.content.1.image_url.url", `7`), "messages[1].content[1].image_url.url"},
		{"url relative", set("messages.1.content.1.image_url.url", `"cat.png"`), "messages[1].content[1].image_url.url"},
		{"url without host", set("messages.1.content.1.image_url.url", `"https://"`), "messages[1].content[1].image_url.url"},
		{"url with space", set("messages.1.content.1.image_url.url", `"https://example.com/a cat.png"`), "messages[1].content[1].image_url.url"},
		{"data url without payload", set("messages.1.content.1.image_url.url", `"data:image/png;base64"`), "messages[1].content[1].image_url.url"},
		{"detail unknown", set("messages.1.content.1.image_url.detail", `"ultra"`), "messages[1].content[1].image_url.detail"},
		{"name number", set("messages.0.name", `1`), "messages[0].name"},
		{"tool_call_id number", set("messages.3.tool_call_id", `1`), "messages[3].tool_call_id"},
		{"tool_calls object", set("messages.2.tool_calls", `{}`), "messages[2].tool_calls"},
		{"temperature above 2", set("temperature", `2.5`), "temperature"},
		{"temperature negative", set("temperature", `-0.1`), "temperature"},
		{"temperature string", set("temperature", `"1"`), "temperature"},
		{"top_p above 1", set("top_p", `1.01`), "top_p"},
		{"max_tokens zero", set("max_tokens", `0`), "max_tokens"},
		{"max_tokens fraction", set("max_tokens", `1.5`), "max_tokens"},
		{"max_tokens float form", set("max_tokens", `100.0`), "max_tokens"},
		{"max_tokens exponent", set("max_tokens", `1e3`), "max_tokens"},
		{"max_tokens string", set("max_tokens", `"100"`), "max_tokens"},
		{"max_completion_tokens zero", set("max_completion_tokens", `0`), "max_completion_tokens"},
		{"stream string", set("stream", `"true"`), "stream"},
		{"stop number", set("stop", `5`), "stop"},
		{"stop item number", set("stop", `["a", 5]`), "stop[1]"},
		{"stop five items", set("stop", `["a","b","c","d","e"]`), "stop"},
		{"presence_penalty above 2", set("presence_penalty", `2.1`), "presence_penalty"},
		{"frequency_penalty below -2", set("frequency_penalty", `-3`), "frequency_penalty"},
		{"user number", set("user", `42`), "user"},
		{"metadata string", set("metadata", `"op"`), "metadata"},
		{"operation_id empty", set("metadata.operation_id", `""`), "metadata.operation_id"},
		{"operation_id too long", set("metadata.operation_id", `"`+strings.Repeat("a", 129)+`"`), "metadata.operation_id"},
		{"operation_id number", set("metadata.operation_id", `12`), "metadata.operation_id"},
		{"tier unknown", set("tier", `"fast"`), "tier"},
		{"tier number", set("tier", `1`), "tier"},
		{"tier_strict string", set("tier_strict", `"yes"`), "tier_strict"},
		{"forbid_atlas_network number", set("forbid_atlas_network", `1`), "forbid_atlas_network"},
		{"tools object", set("tools", `{}`), "tools"},
		{"tool not object", set("tools.0", `"lookup"`), "tools[0]"},
		{"tool type missing", set("tools.0.type", ""), "tools[0].type"},
		{"tool type unknown", set("tools.0.type", `"retrieval"`), "tools[0].type"},
		{"tool function missing", set("tools.0.function", ""), "tools[0].function"},
		{"tool function string", set("tools.0.function", `"f"`), "tools[0].function"},
		{"tool name missing", set("tools.0.function.name", ""), "tools[0].function.name"},
		{"tool description number", set("tools.0.function.description", `1`), "tools[0].function.description"},
		{"tool parameters array", set("tools.0.function.parameters", `[]`), "tools[0].function.parameters"},
		{"stream on batch", withRaw(t, set("stream", `true`), "tier", `"batch"`), "stream"},
	}...)
}

func TestParseChatRejects(t *testing.T) {
	runInvalid(t, ParseChat, chatInvalidCases(t))
}

// TestParseChatFirstViolation: with several violations, the one earliest in
// the SPEC's field order is reported.
func TestParseChatFirstViolation(t *testing.T) {
	body := withRaw(t, withRaw(t, chatBase, "tier", `"x"`), "temperature", `9`)
	if _, err := ParseChat([]byte(body)); err == nil || err.Param != "temperature" {
		t.Fatalf("got %v, want temperature", err)
	}
}

func TestParseChatAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want Request
	}{
		{
			name: "minimal",
			body: `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Hello!"}]}`,
			want: Request{Dialect: Chat, Model: "openai/gpt-4o-mini"},
		},
		{
			name: "every validated field",
			body: chatBase,
			want: Request{Dialect: Chat, Model: "router-1", Tier: "standard", ForbidAtlasNetwork: true, OperationID: "classify_animals", User: "user-42"},
		},
		{
			name: "stream with usage",
			body: `{"model":"router-1","stream":true,"stream_options":{"include_usage":true},"tier":"realtime","tier_strict":true,"messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"Hi"}]}`,
			want: Request{Dialect: Chat, Model: "router-1", Stream: true, IncludeUsage: true, Tier: "realtime", TierStrict: true},
		},
		{
			name: "batch without stream",
			body: `{"model":"router-1","stream":false,"tier":"batch","messages":[{"role":"user","content":"Hi"}]}`,
			want: Request{Dialect: Chat, Model: "router-1", Tier: "batch"},
		},
		{
			name: "nulls read as absent",
			body: `{"model":"m","messages":[{"role":"assistant","content":null,"name":null,"tool_calls":null},{"role":"user","content":"go"}],"temperature":null,"top_p":null,"max_tokens":null,"stop":null,"stream":null,"user":null,"metadata":null,"tier":null,"tier_strict":null,"forbid_atlas_network":null,"tools":null}`,
			want: Request{Dialect: Chat, Model: "m"},
		},
		{
			name: "data URL image and lone stop string",
			body: `{"model":"m","stop":"END","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}},{"type":"text","text":"Describe."}]}]}`,
			want: Request{Dialect: Chat, Model: "m"},
		},
		{
			name: "unknown members pass through",
			body: `{"model":"m","messages":[{"role":"user","content":"hi","weird":[1]}],"n":"two","logit_bias":{"50256":-100},"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}},"tool_choice":"auto","seed":7,"quantization":5}`,
			want: Request{Dialect: Chat, Model: "m"},
		},
		{
			name: "operation id of 128 characters, not bytes",
			body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"operation_id":"` + strings.Repeat("é", 128) + `"}}`,
			want: Request{Dialect: Chat, Model: "m", OperationID: strings.Repeat("é", 128)},
		},
		{
			name: "escaped strings",
			body: `{"model":"open\u0061i/gpt-4o","messages":[{"role":"us\u0065r","content":"hi"}],"tier":"b\u0061tch"}`,
			want: Request{Dialect: Chat, Model: "openai/gpt-4o", Tier: "batch"},
		},
		{
			name: "bounds are inclusive",
			body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2,"top_p":0,"presence_penalty":-2,"frequency_penalty":2,"max_tokens":1,"stop":["a","b","c","d"]}`,
			want: Request{Dialect: Chat, Model: "m"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChat([]byte(tc.body))
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

func TestParseChatRealisticBody(t *testing.T) {
	body := realisticChatBody()
	req, err := ParseChat(body)
	if err != nil {
		t.Fatal(err)
	}
	if req.Model != "router-1" || req.OperationID != "support_triage" || !req.Stream || !req.IncludeUsage {
		t.Fatalf("got %+v", req)
	}
	// Beyond the Request's own strings (model, user, operation id), reading
	// a body allocates nothing.
	if n := testing.AllocsPerRun(50, func() { ParseChat(body) }); n > 3 {
		t.Fatalf("%v allocations per parse, want at most 3", n)
	}
}

// realisticChatBody builds a chat request of about 10 KB like an agent
// sends: a long system prompt, tools, several turns with tool calls and
// results, and an image.
func realisticChatBody() []byte {
	var b strings.Builder
	prose := "The customer reports that the export job fails after the upgrade; logs show a timeout while the worker waits on the storage bucket, and retries do not help. "
	b.WriteString(`{"model":"router-1","stream":true,"stream_options":{"include_usage":true},"temperature":0.3,"max_completion_tokens":1024,`)
	b.WriteString(`"user":"acct_8842","metadata":{"operation_id":"support_triage"},"tier":"standard",`)
	b.WriteString(`"tools":[`)
	for i, name := range []string{"search_tickets", "get_logs", "escalate"} {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%q,"description":"Look things up for the support agent.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"What to look for"},"limit":{"type":"integer","minimum":1}},"required":["query"]}}}`, name)
	}
	b.WriteString(`],"messages":[{"role":"system","content":"You are a support triage assistant. `)
	b.WriteString(strings.Repeat("Follow the runbook, cite ticket ids, and never promise refunds. ", 12))
	b.WriteString(`"}`)
	for turn := 0; b.Len() < 9500; turn++ {
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"text","text":"%s"}`, strings.Repeat(prose, 2))
		if turn == 0 {
			b.WriteString(`,{"type":"image_url","image_url":{"url":"https://cdn.example.com/screenshots/export-error.png","detail":"high"}}`)
		}
		b.WriteString(`]}`)
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"get_logs","arguments":"{\"query\":\"export timeout\",\"limit\":20}"}}]}`, turn)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":"%s"}`, turn, strings.Repeat("2024-05-01T10:00:00Z worker-3 ERROR storage timeout after 30s; ", 4))
		fmt.Fprintf(&b, `,{"role":"assistant","content":"%s"}`, prose)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkParseChat(b *testing.B) {
	body := realisticChatBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseChat(body); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseChat(f *testing.F) {
	f.Add([]byte(chatBase))
	f.Add(realisticChatBody())
	for _, tc := range chatInvalidCases(f) {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"h` + "\xff" + `i ✓"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) { fuzzParse(t, ParseChat, body) })
}
