package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// bad is a byte that never appears in UTF-8 text.
const bad = "\xff"

func TestInvalidUTF8Param(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxDepth+10) + `"x` + bad + `"` + strings.Repeat("}", maxDepth+10)
	for _, tc := range []struct {
		name  string
		body  string
		param string
		ok    bool
	}{
		{"valid ASCII", `{"model":"m"}`, "", false},
		{"valid multi-byte", `{"model":"héllo ✓ 日本"}`, "", false},
		{"lone surrogate escape", `{"model":"\ud800"}`, "", false},
		{"top-level value", `{"model":"m` + bad + `"}`, "model", true},
		{"nested value", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"user","content":"a` + bad + `b"}]}`, "messages[1].content", true},
		{"array item", `{"input":["ok","ok","x` + bad + `"]}`, "input[2]", true},
		{"object in array", `{"items":[{"input":1,"expected_output":{"k":["v` + bad + `"]}}]}`, "items[0].expected_output.k[0]", true},
		{"member name", `{"metadata":{"op` + bad + `":"x"}}`, "metadata.op\uFFFD", true},
		{"top-level member name", `{"mo` + bad + `del":"x"}`, "mo\uFFFDdel", true},
		{"escaped member names", `{"a\"b":{"c\\d":"` + bad + `"}}`, `a"b.c\d`, true},
		{"after escaped quote", `{"text":"say \"` + bad + `\""}`, "text", true},
		{"after escaped backslash", `{"a":"\\","b":"` + bad + `"}`, "b", true},
		{"truncated multi-byte", `{"a":"é","b":"` + "\xc3" + `"}`, "b", true},
		{"surrogate bytes", `{"a":"` + "\xed\xa0\x80" + `"}`, "a", true},
		{"first of two", `{"a":"` + bad + `","b":"` + bad + `"}`, "a", true},
		{"after skipped values", `{"a":{"b":[1,{"c":"d"},[true]]},"e":[null,"` + bad + `"]}`, "e[1]", true},
		{"root string", `"` + bad + `"`, "", true},
		{"between tokens", `{"a":1,` + bad + `"b":2}`, "", false},
		{"in a number", `{"a":1` + bad + `}`, "", false},
		{"below the kept depth", deep, strings.TrimSuffix(strings.Repeat("a.", maxDepth), "."), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			param, ok := InvalidUTF8Param([]byte(tc.body))
			if param != tc.param || ok != tc.ok {
				t.Fatalf("InvalidUTF8Param = %q, %v; want %q, %v", param, ok, tc.param, tc.ok)
			}
		})
	}
}

// TestParseRejectsInvalidUTF8 checks every dialect's validator: a raw
// invalid byte in any string is a violation naming that string, even in a
// member the gateway passes through unvalidated.
func TestParseRejectsInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse parseFunc
		body  string
		param string
	}{
		{"chat content", ParseChat, `{"model":"m","messages":[{"role":"user","content":"h` + bad + `i"}]}`, "messages[0].content"},
		{"chat model", ParseChat, `{"model":"m` + bad + `","messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"chat part text", ParseChat, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"ok"},{"type":"text","text":"` + bad + `"}]}]}`, "messages[0].content[1].text"},
		{"chat unknown member", ParseChat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"x_extra":{"y":"` + bad + `"}}`, "x_extra.y"},
		{"chat metadata key", ParseChat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"k` + bad + `":"v"}}`, "metadata.k\uFFFD"},
		{"messages content", ParseMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"ok"},{"role":"assistant","content":"ok"},{"role":"user","content":"` + bad + `"}]}`, "messages[2].content"},
		{"messages system", ParseMessages, `{"model":"m","max_tokens":5,"system":"s` + bad + `","messages":[{"role":"user","content":"hi"}]}`, "system"},
		{"responses input string", ParseResponses, `{"model":"m","input":"h` + bad + `i"}`, "input"},
		{"responses input item", ParseResponses, `{"model":"m","input":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":[{"type":"input_text","text":"` + bad + `"}]}]}`, "input[2].content[0].text"},
		{"responses instructions", ParseResponses, `{"model":"m","instructions":"` + bad + `","input":"hi"}`, "instructions"},
		{"embeddings string", ParseEmbeddings, `{"model":"m","input":"` + bad + `"}`, "input"},
		{"embeddings array", ParseEmbeddings, `{"model":"m","input":["a","b","` + bad + `"]}`, "input[2]"},
		{"embeddings user", ParseEmbeddings, `{"model":"m","input":"a","user":"u` + bad + `"}`, "user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse([]byte(tc.body))
			if err == nil {
				t.Fatalf("accepted %q", tc.body)
			}
			if err.Param != tc.param || err.Code != CodeInvalidUTF8 {
				t.Fatalf("param %q, code %q (%s); want %q, %q", err.Param, err.Code, err.Message, tc.param, CodeInvalidUTF8)
			}
			if err.Message == "" {
				t.Fatal("violation without a message")
			}
		})
	}
}

// TestParseInvalidUTF8OutsideStrings checks that a bad byte outside every
// string is reported as the body not being JSON.
func TestParseInvalidUTF8OutsideStrings(t *testing.T) {
	for _, body := range []string{
		`{"model":"m",` + bad + `"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]` + bad + `}`,
		bad + `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	} {
		_, err := ParseChat([]byte(body))
		if err == nil {
			t.Fatalf("accepted %q", body)
		}
		if err.Param != "" || err.Code == CodeInvalidUTF8 || !strings.Contains(err.Message, "valid JSON") {
			t.Fatalf("%q: got %+v, want the invalid-JSON violation", body, err)
		}
	}
}

// TestParseAcceptsUTF8 checks that multi-byte text and escapes, lone
// surrogates included, pass every dialect's validator.
func TestParseAcceptsUTF8(t *testing.T) {
	const text = "héllo ✓ 日本 🎉"
	for _, tc := range []struct {
		name  string
		parse parseFunc
		body  string
	}{
		{"chat", ParseChat, `{"model":"m","messages":[{"role":"user","content":"` + text + `"}],"metadata":{"clé":"` + text + `"}}`},
		{"chat escapes", ParseChat, `{"model":"m","messages":[{"role":"user","content":"\u00e9 \ud83c\udf89 \ud800 \udfff"}]}`},
		{"messages", ParseMessages, `{"model":"m","max_tokens":5,"system":"` + text + `","messages":[{"role":"user","content":"` + text + `"}]}`},
		{"responses", ParseResponses, `{"model":"m","input":[{"role":"user","content":"` + text + `"}]}`},
		{"embeddings", ParseEmbeddings, `{"model":"m","input":["` + text + `","\ud800"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.parse([]byte(tc.body)); err != nil {
				t.Fatalf("rejected %s: %v", tc.body, err)
			}
		})
	}
}

// FuzzInvalidUTF8Param checks the helper never panics, and that a body that
// is valid JSON but not valid UTF-8 always has a string named as at fault.
func FuzzInvalidUTF8Param(f *testing.F) {
	f.Add([]byte(`{"a":["b",{"c":"d` + bad + `"}]}`))
	f.Add([]byte(`{"k` + bad + `":1}`))
	f.Add([]byte(`[1,` + bad + `]`))
	f.Add([]byte(`{"a":"\"\\` + "\xc3" + `"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		param, ok := InvalidUTF8Param(body)
		if utf8.Valid(body) && (ok || param != "") {
			t.Fatalf("valid UTF-8 %q named %q", body, param)
		}
		if !utf8.Valid(body) && json.Valid(body) && !ok {
			t.Fatalf("JSON %q with invalid UTF-8 not named", body)
		}
		if !utf8.ValidString(param) {
			t.Fatalf("param %q is not UTF-8", param)
		}
	})
}
