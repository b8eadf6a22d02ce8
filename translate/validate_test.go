package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/sjson"
)

// parseFunc is the signature shared by the four request parsers.
type parseFunc func(body []byte) (Request, *ValidationError)

// invalidCase is a body that breaks exactly one rule, and the param that
// must name it.
type invalidCase struct {
	name  string
	body  string
	param string
}

// withRaw returns base with the member at path (sjson syntax) set to the raw
// JSON value, or deleted when raw is empty.
func withRaw(t testing.TB, base, path, raw string) string {
	t.Helper()
	var out string
	var err error
	if raw == "" {
		out, err = sjson.Delete(base, path)
	} else {
		out, err = sjson.SetRaw(base, path, raw)
	}
	if err != nil {
		t.Fatalf("editing %s: %v", path, err)
	}
	return out
}

// runInvalid checks that each body is rejected with the expected param and
// a message for a person.
func runInvalid(t *testing.T, parse parseFunc, cases []invalidCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.body))
			if err == nil {
				t.Fatalf("accepted %s", tc.body)
			}
			if err.Param != tc.param {
				t.Fatalf("param = %q (%s), want %q\nbody: %s", err.Param, err.Message, tc.param, tc.body)
			}
			if err.Message == "" || strings.Contains(err.Message, "%!") {
				t.Fatalf("bad message %q", err.Message)
			}
		})
	}
}

// bodyCases are the violations every shape shares: the body itself.
func bodyCases() []invalidCase {
	return []invalidCase{
		{"empty body", ``, ""},
		{"not JSON", `{"model":`, ""},
		{"trailing garbage", `{"model":"m"} x`, ""},
		{"array body", `[{"model":"m"}]`, ""},
		{"string body", `"hello"`, ""},
		{"null body", `null`, ""},
		{"too deep", `{"model":"m","x":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`, ""},
	}
}

// fuzzParse is the body of every parser's fuzz target: no panic, and an
// accepted body is valid JSON and valid UTF-8 whose model the Request
// carries.
func fuzzParse(t *testing.T, parse parseFunc, body []byte) {
	req, err := parse(body)
	if err != nil {
		if err.Message == "" {
			t.Fatalf("violation without a message: %+v", err)
		}
		return
	}
	if !json.Valid(body) {
		t.Fatalf("accepted invalid JSON %q", body)
	}
	if !utf8.Valid(body) {
		t.Fatalf("accepted invalid UTF-8 %q", body)
	}
	if req.Dialect == 0 {
		t.Fatal("accepted request without a dialect")
	}
}

func TestAbsoluteURI(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://example.com/cat.png", true},
		{"HTTP://example.com", true},
		{"https://example.com?x=1", true},
		{"data:image/png;base64,iVBORw0KGgo=", true},
		{"data:,hello", true},
		{"s3://bucket/key.png", true},
		{"urn:isbn:0451450523", true},
		{"", false},
		{"cat.png", false},
		{"/images/cat.png", false},
		{"//example.com/cat.png", false},
		{"https:", false},
		{"https://", false},
		{"https:///path", false},
		{"https:example.com", false},
		{"https://exa mple.com/", false},
		{"https://example.com/\n", false},
		{"data:image/png;base64", false},
		{"1http://example.com", false},
		{"ht_tp://example.com", false},
		{":nothing", false},
	} {
		if got := absoluteURI(tc.uri); got != tc.ok {
			t.Errorf("absoluteURI(%q) = %v, want %v", tc.uri, got, tc.ok)
		}
	}
}

func TestNestedWithin(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		json  string
		limit int
		ok    bool
	}{
		{deep(3), 3, true},
		{deep(4), 3, false},
		{`{"a":{"b":[1]}}`, 3, true},
		{`{"a":{"b":[[1]]}}`, 3, false},
		// Brackets inside strings, escaped quotes included, do not count.
		{`["[[[[", "\"[[[[", "\\"]`, 1, true},
		{`{"a":"}}}}"}`, 1, true},
	} {
		if got := nestedWithin(tc.json, tc.limit); got != tc.ok {
			t.Errorf("nestedWithin(%s, %d) = %v, want %v", tc.json, tc.limit, got, tc.ok)
		}
	}
}

func TestUnderBuildsParamPaths(t *testing.T) {
	err := under("messages", under("[2]", under("content", under("[0]", invalid("image_url.url", "x")))))
	if err.Param != "messages[2].content[0].image_url.url" {
		t.Fatalf("param = %q", err.Param)
	}
	if err := under("source", missing("")); err.Param != "source" {
		t.Fatalf("param = %q", err.Param)
	}
	if under("x", nil) != nil {
		t.Fatal("under(nil) is not nil")
	}
}

// TestRequestDoesNotAliasBody guards the zero-copy read: the Request must
// survive the caller editing the body in place.
func TestRequestDoesNotAliasBody(t *testing.T) {
	body := []byte(`{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"operation_id":"op_1"}}`)
	req, err := ParseChat(body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'x'
	}
	if req.Model != "openai/gpt-4o" || req.User != "u-1" || req.OperationID != "op_1" {
		t.Fatalf("request changed with the body: %+v", req)
	}
}

func TestRepeatedMemberRejected(t *testing.T) {
	// A repeated member the gateway reads could be read one way here and
	// another way upstream; repeats of unknown members pass through.
	runInvalid(t, ParseChat, []invalidCase{
		{"top level", `{"model":"a","messages":[{"role":"user","content":"hi"}],"temperature":1,"temperature":5}`, "temperature"},
		{"in a message", `{"model":"a","messages":[{"role":"user","role":"system","content":"hi"}]}`, "messages[0].role"},
		{"in metadata", `{"model":"a","messages":[{"role":"user","content":"hi"}],"metadata":{"operation_id":"a","operation_id":"b"}}`, "metadata.operation_id"},
	})
	if _, err := ParseChat([]byte(`{"model":"a","messages":[{"role":"user","content":"hi"}],"x":1,"x":2}`)); err != nil {
		t.Fatalf("repeated unknown member rejected: %v", err)
	}
}

// TestRequestCounts: each validator counts the messages (responses: input
// items) and tools it reads, so the call path can bound them without
// another pass over the body.
func TestRequestCounts(t *testing.T) {
	msg := `{"role":"user","content":"hi"}`
	for _, tc := range []struct {
		name        string
		parse       func([]byte) (Request, *ValidationError)
		body        string
		msgs, tools int
	}{
		{"chat", ParseChat, `{"model":"m","messages":[` + msg + `,` + msg + `],"tools":[{"type":"function","function":{"name":"f"}}]}`, 2, 1},
		{"messages", ParseMessages, `{"model":"m","max_tokens":5,"messages":[` + msg + `],"tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"g","input_schema":{"type":"object"}}]}`, 1, 2},
		{"responses items", ParseResponses, `{"model":"m","input":[` + msg + `,` + msg + `,` + msg + `]}`, 3, 0},
		{"responses string", ParseResponses, `{"model":"m","input":"hi"}`, 1, 0},
	} {
		req, verr := tc.parse([]byte(tc.body))
		if verr != nil {
			t.Fatalf("%s: %v", tc.name, verr)
		}
		if req.Messages != tc.msgs || req.Tools != tc.tools {
			t.Errorf("%s: %d messages, %d tools; want %d, %d", tc.name, req.Messages, req.Tools, tc.msgs, tc.tools)
		}
	}
}
