package translate

import (
	"encoding/json"
	"testing"
)

func TestAppendJSONStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\n\r\t", "ünïcødé 😀", "\u2028\u2029", "<tag>&"} {
		b := AppendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		if got != s {
			t.Fatalf("round trip %q -> %s -> %q", s, b, got)
		}
	}
	if got := string(AppendJSONString(nil, "a\xffb")); got != `"a\ufffdb"` {
		t.Fatalf("invalid utf-8: %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello\n\"x\"")
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid(AppendJSONString(nil, s)) {
			t.Fatalf("invalid JSON for %q", s)
		}
	})
}

func TestReadEmbeddingsUsage(t *testing.T) {
	u := ReadEmbeddingsUsage([]byte(`{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":8,"total_tokens":8}}`))
	if !u.Known || u.InputTokens != 8 || u.OutputTokens != 0 {
		t.Fatalf("%+v", u)
	}
	if u := ReadEmbeddingsUsage([]byte(`{"object":"list","data":[]}`)); u.Known {
		t.Fatalf("usage without usage: %+v", u)
	}
}
