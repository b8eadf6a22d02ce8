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
