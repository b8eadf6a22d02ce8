package routing

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/modelgate/gateway/translate"
)

// One conversation with a tool in the three shapes.
const (
	weatherChat = `{"model":"openai/gpt-4o","temperature":0.2,"messages":[
	  {"role":"system","content":"You are a weather bot."},
	  {"role":"user","content":[{"type":"text","text":"Weather in Paris?"},{"type":"image_url","image_url":{"url":"https://example.com/map.png"}}]},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
	  {"role":"tool","tool_call_id":"call_1","content":"18°C"}],
	  "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`

	weatherMessages = `{"model":"anthropic/claude-sonnet-4-5","max_tokens":256,"system":[{"type":"text","text":"You are a weather bot."}],"messages":[
	  {"role":"user","content":[{"type":"text","text":"Weather in Paris?"},{"type":"image","source":{"type":"url","url":"https://example.com/map.png"}}]},
	  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Paris"}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"18°C"}]}],
	  "tools":[{"name":"get_weather","input_schema":{"properties":{"city":{"type":"string"}},"type":"object"}}]}`

	weatherResponses = `{"model":"openai/gpt-4.1","instructions":"You are a weather bot.","input":[
	  {"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"},{"type":"input_image","image_url":"https://example.com/map.png"}]},
	  {"type":"function_call","call_id":"fc_7","name":"get_weather","arguments":"{\"city\": \"Paris\"}"},
	  {"type":"function_call_output","call_id":"fc_7","output":"18°C"}],
	  "tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`
)

var fingerprintForm = regexp.MustCompile(`^fp_[pesc]_[0-9a-f]{64}$`)

func fingerprints(t testing.TB, d translate.Dialect, body string) Fingerprints {
	t.Helper()
	fp, _ := RequestFingerprints(d, []byte(body), "standard", false)
	return fp
}

func edit(t testing.TB, body, path, raw string) string {
	t.Helper()
	var out string
	var err error
	if raw == "" {
		out, err = sjson.Delete(body, path)
	} else {
		out, err = sjson.SetRaw(body, path, raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFingerprintForm(t *testing.T) {
	fp, canon := RequestFingerprints(translate.Chat, []byte(weatherChat), "standard", false)
	for _, s := range []string{fp.Prompt, fp.Cache, *fp.Schema} {
		if !fingerprintForm.MatchString(s) {
			t.Errorf("malformed fingerprint %q", s)
		}
	}
	if !strings.HasPrefix(fp.Prompt, "fp_p_") || !strings.HasPrefix(fp.Cache, "fp_c_") || !strings.HasPrefix(*fp.Schema, "fp_s_") {
		t.Errorf("wrong prefixes: %+v", fp)
	}
	if fp.Exchange != nil {
		t.Error("a request has no exchange fingerprint")
	}
	if e := ExchangeFingerprint(canon, &translate.Result{Text: "Sunny."}); e == nil || !strings.HasPrefix(*e, "fp_e_") || !fingerprintForm.MatchString(*e) {
		t.Errorf("malformed exchange fingerprint %v", e)
	}
}

func TestFixturesAreValidRequests(t *testing.T) {
	for _, tc := range []struct {
		parse func([]byte) (translate.Request, *translate.ValidationError)
		body  string
	}{
		{translate.ParseChat, weatherChat},
		{translate.ParseMessages, weatherMessages},
		{translate.ParseResponses, weatherResponses},
		{translate.ParseChat, cacheBase},
		{translate.ParseChat, string(agentBody())},
	} {
		if _, err := tc.parse([]byte(tc.body)); err != nil {
			t.Errorf("fixture rejected: %v", err)
		}
	}
}

func TestPromptFingerprintAcrossShapesAndModels(t *testing.T) {
	chat := fingerprints(t, translate.Chat, weatherChat)
	for _, tc := range []struct {
		name string
		d    translate.Dialect
		body string
	}{
		{"messages", translate.Messages, weatherMessages},
		{"responses", translate.Responses, weatherResponses},
		{"other model", translate.Chat, edit(t, weatherChat, "model", `"router-1"`)},
		{"other sampling", translate.Chat, edit(t, weatherChat, "temperature", `1.5`)},
	} {
		if got := fingerprints(t, tc.d, tc.body); got.Prompt != chat.Prompt {
			t.Errorf("%s: prompt fingerprint %s, chat has %s", tc.name, got.Prompt, chat.Prompt)
		}
	}
	if fingerprints(t, translate.Chat, edit(t, weatherChat, "messages.1.content.0.text", `"Weather in Rome?"`)).Prompt == chat.Prompt {
		t.Error("different content, same prompt fingerprint")
	}
	if fingerprints(t, translate.Chat, edit(t, weatherChat, "messages.0.content", `"You are a poet."`)).Prompt == chat.Prompt {
		t.Error("different system text, same prompt fingerprint")
	}
}

// cacheBase sets every field the cache key covers.
const cacheBase = `{"model":"router-1","messages":[{"role":"user","content":"Summarize the report."}],
  "temperature":0,"top_p":1,"max_tokens":200,"stop":["END"],"seed":42,
  "response_format":{"type":"json_object"},
  "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
  "user":"u-1","metadata":{"operation_id":"summaries"},"stream":false,"tier":"standard"}`

func TestCacheFingerprintCoversEachField(t *testing.T) {
	base, _ := RequestFingerprints(translate.Chat, []byte(cacheBase), "standard", false)
	type variant struct {
		name       string
		d          translate.Dialect
		body       string
		tier       string
		tierStrict bool
	}
	chat := func(name, path, raw string) variant {
		return variant{name, translate.Chat, edit(t, cacheBase, path, raw), "standard", false}
	}
	for _, v := range []variant{
		chat("prompt", "messages.0.content", `"Summarize the memo."`),
		chat("model", "model", `"openai/gpt-4o"`),
		chat("temperature", "temperature", `0.5`),
		chat("temperature removed", "temperature", ""),
		chat("top_p", "top_p", `0.9`),
		chat("max_tokens", "max_tokens", `201`),
		chat("max_completion_tokens", "max_completion_tokens", `300`),
		chat("stop", "stop", `["STOP"]`),
		chat("seed", "seed", `43`),
		chat("response_format", "response_format", `{"type":"text"}`),
		chat("tools", "tools.0.function.name", `"g"`),
		chat("tools removed", "tools", ""),
		{"tier", translate.Chat, cacheBase, "batch", false},
		{"tier_strict", translate.Chat, cacheBase, "standard", true},
		// Output-shaping fields beyond SPEC's list: equal keys must mean
		// equivalent requests.
		chat("n", "n", `2`),
		chat("tool_choice", "tool_choice", `"required"`),
		chat("frequency_penalty", "frequency_penalty", `1`),
	} {
		got, _ := RequestFingerprints(v.d, []byte(v.body), v.tier, v.tierStrict)
		if got.Cache == base.Cache {
			t.Errorf("%s: a change left the cache key unchanged", v.name)
		}
	}
	for _, v := range []variant{
		chat("user", "user", `"u-2"`),
		chat("metadata", "metadata.operation_id", `"other"`),
		chat("stream", "stream", `true`),
		chat("body tier (the effective tier counts)", "tier", `"batch"`),
		chat("explicit null", "presence_penalty", `null`),
		chat("lone stop string", "stop", `"END"`),
		chat("tool key order and spacing", "tools", `[ {"function": {"parameters": {"type": "object"}, "name": "f"}, "type": "function"} ]`),
		chat("max_tokens spelled max_completion_tokens", "max_tokens", ""),
	} {
		if v.name == "max_tokens spelled max_completion_tokens" {
			v.body = edit(t, v.body, "max_completion_tokens", `200`)
		}
		got, _ := RequestFingerprints(v.d, []byte(v.body), v.tier, v.tierStrict)
		if got.Cache != base.Cache {
			t.Errorf("%s: an unlisted or equivalent change moved the cache key", v.name)
		}
	}
}

func TestCacheFingerprintOtherShapes(t *testing.T) {
	messages := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"stop_sequences":["x"],"temperature":1,"top_k":5,"metadata":{"user_id":"a"}}`
	responses := `{"model":"m","input":"hi","max_output_tokens":100,"text":{"format":{"type":"json_schema","name":"r","schema":{"type":"object"}}},"user":"a"}`
	embeddings := `{"model":"m","input":["hi"],"dimensions":64,"encoding_format":"float","quantization":"q8","user":"a"}`
	for _, tc := range []struct {
		d       translate.Dialect
		body    string
		changed []string // path=raw edits that must move the key
		same    []string // edits that must not
	}{
		{translate.Messages, messages,
			[]string{"max_tokens=101", "stop_sequences=[\"y\"]", "temperature=0.5", "model=\"n\""},
			[]string{"metadata.user_id=\"b\"", "stream=true"}},
		{translate.Responses, responses,
			[]string{"max_output_tokens=99", "text.format.name=\"s\"", "input=\"hello\"", "parallel_tool_calls=true"},
			[]string{"user=\"b\""}},
		{translate.Embeddings, embeddings,
			[]string{"dimensions=128", "encoding_format=\"base64\"", "quantization=\"q4\"", "input=[\"ho\"]"},
			[]string{"user=\"b\"", "metadata={\"operation_id\":\"x\"}"}},
	} {
		base := fingerprints(t, tc.d, tc.body)
		apply := func(e string) string {
			path, raw, _ := strings.Cut(e, "=")
			return edit(t, tc.body, path, raw)
		}
		for _, e := range tc.changed {
			if fingerprints(t, tc.d, apply(e)).Cache == base.Cache {
				t.Errorf("%s %s: cache key unchanged", tc.d, e)
			}
		}
		for _, e := range tc.same {
			if fingerprints(t, tc.d, apply(e)).Cache != base.Cache {
				t.Errorf("%s %s: cache key moved", tc.d, e)
			}
		}
	}
}

func TestSchemaFingerprint(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    translate.Dialect
		body string
	}{
		{"chat without tools", translate.Chat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`},
		{"messages tool without schema", translate.Messages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`},
		{"responses built-in tool, text format", translate.Responses, `{"model":"m","input":"hi","tools":[{"type":"web_search_preview"}],"text":{"format":{"type":"text"}}}`},
		{"embeddings", translate.Embeddings, `{"model":"m","input":"hi"}`},
	} {
		if s := fingerprints(t, tc.d, tc.body).Schema; s != nil {
			t.Errorf("%s: schema fingerprint %s without a schema", tc.name, *s)
		}
	}

	// The same tool schema gives the same fingerprint in every shape.
	chat := fingerprints(t, translate.Chat, weatherChat).Schema
	for _, tc := range []struct {
		d    translate.Dialect
		body string
	}{{translate.Messages, weatherMessages}, {translate.Responses, weatherResponses}} {
		if s := fingerprints(t, tc.d, tc.body).Schema; s == nil || *s != *chat {
			t.Errorf("%s: schema fingerprint %v, chat has %s", tc.d, s, *chat)
		}
	}
	if s := fingerprints(t, translate.Chat, edit(t, weatherChat, "tools.0.function.parameters.properties.city.type", `"integer"`)).Schema; *s == *chat {
		t.Error("a different tool schema gives the same fingerprint")
	}
	if s := fingerprints(t, translate.Chat, edit(t, weatherChat, "tools.0.function.name", `"get_forecast"`)).Schema; *s == *chat {
		t.Error("a schema bound to another tool gives the same fingerprint")
	}
	if s := fingerprints(t, translate.Chat, edit(t, weatherChat, "tools.0.function.description", `"Weather now"`)).Schema; *s != *chat {
		t.Error("a tool description moved the schema fingerprint")
	}

	// Structured output: chat's json_schema and responses' text.format match.
	schema := `{"name":"weather","strict":true,"schema":{"type":"object","properties":{"temp":{"type":"number"}}}}`
	chatRF := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":%s}}`, schema)
	respTF := fmt.Sprintf(`{"model":"m","input":"hi","text":{"format":%s}}`, edit(t, schema, "type", `"json_schema"`))
	a, b := fingerprints(t, translate.Chat, chatRF).Schema, fingerprints(t, translate.Responses, respTF).Schema
	if a == nil || b == nil || *a != *b {
		t.Fatalf("structured output schema: chat %v, responses %v", a, b)
	}
	if c := fingerprints(t, translate.Chat, edit(t, chatRF, "response_format.json_schema.strict", `false`)).Schema; *c == *a {
		t.Error("strict did not count")
	}
}

func TestExchangeFingerprint(t *testing.T) {
	_, canon := RequestFingerprints(translate.Chat, []byte(weatherChat), "standard", false)
	if ExchangeFingerprint(canon, nil) != nil || ExchangeFingerprint(canon, &translate.Result{FinishReason: "stop"}) != nil {
		t.Fatal("an empty result has an exchange fingerprint")
	}
	call := func(id, name, args string) *translate.Result {
		return &translate.Result{Text: "Let me look.", ToolCalls: []translate.ToolCall{{ID: id, Name: name, Arguments: args}}, FinishReason: "tool_calls"}
	}
	base := *ExchangeFingerprint(canon, call("call_abc", "get_weather", `{"city":"Paris","unit":"c"}`))
	if got := *ExchangeFingerprint(canon, call("toolu_01XYZ", "get_weather", `{ "unit": "c", "city": "Paris" }`)); got != base {
		t.Error("tool call id or argument spelling moved the exchange fingerprint")
	}
	for name, r := range map[string]*translate.Result{
		"arguments": call("call_abc", "get_weather", `{"city":"Rome","unit":"c"}`),
		"tool name": call("call_abc", "get_forecast", `{"city":"Paris","unit":"c"}`),
		"text":      {Text: "Let me look!", ToolCalls: call("", "get_weather", `{"city":"Paris","unit":"c"}`).ToolCalls},
	} {
		if *ExchangeFingerprint(canon, r) == base {
			t.Errorf("a different %s gives the same exchange fingerprint", name)
		}
	}
	_, other := RequestFingerprints(translate.Chat, []byte(edit(t, weatherChat, "messages.1.content.0.text", `"Weather in Rome?"`)), "standard", false)
	if *ExchangeFingerprint(other, call("call_abc", "get_weather", `{"city":"Paris","unit":"c"}`)) == base {
		t.Error("a different prompt gives the same exchange fingerprint")
	}
	// Model-agnostic across shapes: the same prompt read from messages.
	_, fromMessages := RequestFingerprints(translate.Messages, []byte(weatherMessages), "realtime", true)
	if *ExchangeFingerprint(fromMessages, call("x", "get_weather", `{"unit":"c","city":"Paris"}`)) != base {
		t.Error("the same exchange from another shape differs")
	}
}

// agentBody builds a chat request of about 10 KB with tools, tool calls and
// long turns.
func agentBody() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"router-1","temperature":0.3,"max_completion_tokens":1024,"seed":1,"tools":[`)
	for i, name := range []string{"search_tickets", "get_logs", "escalate"} {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%q,"parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}}}`, name)
	}
	b.WriteString(`],"messages":[{"role":"system","content":"You are a support triage assistant."}`)
	for turn := 0; b.Len() < 9500; turn++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"%s"}`, strings.Repeat("The export job fails after the upgrade with a storage timeout. ", 6))
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"get_logs","arguments":"{\"query\":\"export\",\"limit\":20}"}}]}`, turn)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":"%s"}`, turn, strings.Repeat("worker-3 ERROR storage timeout after 30s; ", 5))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkRequestFingerprints(b *testing.B) {
	body := agentBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		RequestFingerprints(translate.Chat, body, "standard", false)
	}
}

func BenchmarkExchangeFingerprint(b *testing.B) {
	_, canon := RequestFingerprints(translate.Chat, agentBody(), "standard", false)
	r := &translate.Result{Text: "The storage bucket times out; escalating.", ToolCalls: []translate.ToolCall{{ID: "call_9", Name: "escalate", Arguments: `{"query":"storage timeout"}`}}}
	b.ReportAllocs()
	for b.Loop() {
		ExchangeFingerprint(canon, r)
	}
}
