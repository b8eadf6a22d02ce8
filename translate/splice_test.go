package translate

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

func TestFinishChatResponseSplices(t *testing.T) {
	for _, body := range []string{
		`{"id":"chatcmpl-up","object":"chat.completion","model":"gpt","choices":[]}`,
		`{"model":"gpt","id":"x","choices":[]}`,
		`{ "id" : "up" , "model":"m" }`,
		`{"object":"chat.completion","choices":[]}`,
		`{"id":"a","model":"b","delivery":{"old":true}}`,
	} {
		got := FinishChatResponse([]byte(body), "chatcmpl-gw", "demo/m \"q\"", []byte(`{"tier":"standard"}`))
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s -> invalid %s", body, got)
		}
		if m["id"] != "chatcmpl-gw" || m["model"] != "demo/m \"q\"" || !reflect.DeepEqual(m["delivery"], map[string]any{"tier": "standard"}) {
			t.Fatalf("%s -> %s", body, got)
		}
	}
}

func TestAppendMemberToEmptyObject(t *testing.T) {
	got := insertMember([]byte(`{ }`), "delivery", []byte(`{}`), false)
	if !gjson.ValidBytes(got) || gjson.GetBytes(got, "delivery").Raw != "{}" {
		t.Fatalf("%s", got)
	}
}

func FuzzFinishChatResponse(f *testing.F) {
	f.Add([]byte(`{"id":"a","model":"b","choices":[]}`), "id", "model")
	f.Fuzz(func(t *testing.T, body []byte, id, model string) {
		if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
			return
		}
		out := FinishChatResponse(body, id, model, []byte(`{"t":1}`))
		if !gjson.ValidBytes(out) {
			t.Fatalf("%s -> invalid %s", body, out)
		}
	})
}

func BenchmarkChatStreamChunk(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-upstream123","object":"chat.completion.chunk","created":1700000000,"model":"demo-chat","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`)
	s := NewChatStream("chatcmpl-gateway0000000000000000", "demo/demo-chat", true)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = s.Event(buf[:0], "", chunk)
	}
}

// TestReadChatAnswerAgreesWithLookups: the one-pass reader finds what a
// gjson lookup per field finds (the first of repeated keys included), and
// finishing from it gives the same bytes as finishing by lookup.
func TestReadChatAnswerAgreesWithLookups(t *testing.T) {
	bodies := []string{
		string(convFixture(t, "chat_response_text.json")),
		string(convFixture(t, "chat_response_tool.json")),
		`{"id":"a","model":"first","model":"second","usage":{"prompt_tokens":3,"prompt_tokens":9},"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`,
		`{"usage":{"completion_tokens":2},"choices":[]}`,
		`{"id":"a","usage":null,"choices":{"0":{"finish_reason":"length"}},"delivery":{"old":1}}`,
		`{}`,
	}
	for _, body := range bodies {
		rep := readChatAnswer([]byte(body))
		root := gjson.Parse(body)
		wantUsage := Usage{}
		if u := root.Get("usage"); u.IsObject() {
			wantUsage = Usage{
				InputTokens:  int(u.Get("prompt_tokens").Int()),
				OutputTokens: int(u.Get("completion_tokens").Int()),
				Known:        u.Get("prompt_tokens").Exists() || u.Get("completion_tokens").Exists(),
			}
		}
		if rep.usage != wantUsage {
			t.Errorf("%s: usage %+v, want %+v", body, rep.usage, wantUsage)
		}
		choice := root.Get("choices.0")
		if rep.result.FinishReason != choice.Get("finish_reason").String() || rep.result.Text != choice.Get("message.content").String() ||
			len(rep.result.ToolCalls) != len(choice.Get("message.tool_calls").Array()) {
			t.Errorf("%s: result %+v", body, rep.result)
		}
		if rep.model.String() != root.Get("model").String() {
			t.Errorf("%s: model %q", body, rep.model)
		}
		got := finishChatAnswer([]byte(body), &rep, "chatcmpl-gw", "demo/m", []byte(`{"t":1}`))
		want := FinishChatResponse([]byte(body), "chatcmpl-gw", "demo/m", []byte(`{"t":1}`))
		if string(got) != string(want) {
			t.Errorf("%s: finished as\n%s\nwant\n%s", body, got, want)
		}
	}
}
