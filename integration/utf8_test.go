package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// badSequences are byte sequences that are not UTF-8: a lone continuation
// byte, bytes that never occur, truncated sequences, an overlong encoding
// and an encoded surrogate.
var badSequences = []string{"\x80", "\xff", "\xfe", "\xc3", "\xe2\x82", "\xf0\x9f\x8e", "\xc0\xaf", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80"}

// utf8Alphabet is what the generated texts are made of: ASCII, and one-,
// two-, three- and four-byte runes. It has no brackets, which the demo
// upstream reads as directives.
var utf8Alphabet = []rune("abcdefghij KLMNOP 0123 .,!? éßü ✓€ 日本語 🎉🙂")

// utf8Slot is one string of a request body: the param that names it and
// the valid text it holds.
type utf8Slot struct {
	param string
	text  func(r *rand.Rand, i int) string
}

// utf8Endpoint is an endpoint that takes a body: a body template whose %s
// verbs are the slots' JSON strings, in order, and the status of a valid
// body.
type utf8Endpoint struct {
	method, path, template string
	slots                  []utf8Slot
	want                   int
}

// randomText is 1 to 20 runes of utf8Alphabet.
func randomText(r *rand.Rand, _ int) string {
	n := 1 + r.Intn(20)
	out := make([]rune, n)
	for i := range out {
		out[i] = utf8Alphabet[r.Intn(len(utf8Alphabet))]
	}
	return string(out)
}

// fixedText is a slot holding s.
func fixedText(s string) func(*rand.Rand, int) string {
	return func(*rand.Rand, int) string { return s }
}

// jsonString encodes s as a JSON string.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withBadBytes encodes s as a JSON string with seq inserted raw at a rune
// boundary.
func withBadBytes(t *testing.T, r *rand.Rand, s, seq string) string {
	t.Helper()
	runes := []rune(s)
	at := len(string(runes[:r.Intn(len(runes)+1)]))
	head, tail := jsonString(t, s[:at]), jsonString(t, s[at:])
	return head[:len(head)-1] + seq + tail[1:]
}

// mutate changes one to three random bytes of body, or inserts them; half
// of the new bytes are above 0x7f.
func mutate(r *rand.Rand, body string) string {
	b := []byte(body)
	for n := 1 + r.Intn(3); n > 0; n-- {
		c := byte(r.Intn(256))
		if r.Intn(2) == 0 {
			c |= 0x80
		}
		at := r.Intn(len(b))
		if r.Intn(2) == 0 {
			b[at] = c
		} else {
			b = append(b[:at], append([]byte{c}, b[at:]...)...)
		}
	}
	return string(b)
}

// assertUTF8JSON checks that a response body is valid JSON and valid UTF-8.
func assertUTF8JSON(t *testing.T, what string, body []byte) {
	t.Helper()
	if !json.Valid(body) || !utf8.Valid(body) {
		t.Fatalf("%s: the response is not valid UTF-8 JSON: %q", what, body)
	}
}

// TestUTF8BodiesAreRefused sends every endpoint that takes a body valid
// requests, requests with bytes that are not UTF-8 injected into a string,
// and randomly mutated requests, from a seeded generator; then it reads back
// every list and record and checks that all of them are valid UTF-8 JSON,
// and that the OpenAI SDK parses the calls page.
func TestUTF8BodiesAreRefused(t *testing.T) {
	g := startGateway(t)

	// Records the endpoints refer to.
	evID := g.post("/evaluators", `{"name":"évaluateur ✓","kind":"regex","config":{"pattern":"日本"}}`, http.StatusCreated).Get("id").String()
	opID := g.post("/operations", `{"key":"utf8_ops","name":"opération 日本"}`, http.StatusCreated).Get("id").String()
	draftID := g.post("/datasets", `{"operation_id":"utf8_ops","name":"brouillon"}`, http.StatusCreated).Get("id").String()
	g.post("/datasets/"+draftID+"/items", `{"items":[{"input":"q ✓","expected_output":"日本"}]}`, http.StatusCreated)
	goldenID := g.post("/datasets", `{"operation_id":"utf8_ops","name":"doré"}`, http.StatusCreated).Get("id").String()
	g.post("/datasets/"+goldenID+"/items", `{"items":[{"input":"q","expected_output":"a"}]}`, http.StatusCreated)
	g.post("/datasets/"+goldenID+"/promote", nil, http.StatusOK)
	callID := g.post("/chat/completions", chatBody("demo/demo-chat", "héllo ✓ 日本", ""), http.StatusOK).Get("id").String()

	slot := func(param string) utf8Slot { return utf8Slot{param: param, text: randomText} }
	endpoints := []utf8Endpoint{
		{http.MethodPost, "/chat/completions",
			`{"model":"demo/demo-chat","messages":[{"role":"system","content":%s},{"role":"user","content":%s}],"user":%s,"metadata":{"operation_id":"utf8_ops"}}`,
			[]utf8Slot{slot("messages[0].content"), slot("messages[1].content"), slot("user")}, http.StatusOK},
		{http.MethodPost, "/messages",
			`{"model":"demo-anthropic/demo-claude","max_tokens":50,"system":%s,"messages":[{"role":"user","content":[{"type":"text","text":%s}]}]}`,
			[]utf8Slot{slot("system"), slot("messages[0].content[0].text")}, http.StatusOK},
		{http.MethodPost, "/responses",
			`{"model":"demo/demo-chat","instructions":%s,"input":[{"role":"user","content":%s}]}`,
			[]utf8Slot{slot("instructions"), slot("input[0].content")}, http.StatusOK},
		{http.MethodPost, "/embeddings",
			`{"model":"demo/demo-embed","input":[%s,%s]}`,
			[]utf8Slot{slot("input[0]"), slot("input[1]")}, http.StatusOK},
		{http.MethodPost, "/feedback",
			`{"call_id":%s,"rating":"thumbs_up","correction":%s,"tags":[%s]}`,
			[]utf8Slot{{"call_id", fixedText(callID)}, slot("correction"), slot("tags[0]")}, http.StatusOK},
		{http.MethodPost, "/operations",
			`{"key":%s,"name":%s,"description":%s}`,
			[]utf8Slot{{"key", func(_ *rand.Rand, i int) string { return fmt.Sprintf("op_%d", i) }}, slot("name"), slot("description")}, http.StatusCreated},
		{http.MethodPatch, "/operations/" + opID,
			`{"description":%s}`,
			[]utf8Slot{slot("description")}, http.StatusOK},
		{http.MethodPost, "/datasets",
			`{"operation_id":%s,"name":%s}`,
			[]utf8Slot{{"operation_id", fixedText("utf8_ops")}, slot("name")}, http.StatusCreated},
		{http.MethodPost, "/datasets/" + draftID + "/items",
			`{"items":[{"input":{"q":%s},"expected_output":%s,"weight":1}]}`,
			[]utf8Slot{slot("items[0].input.q"), slot("items[0].expected_output")}, http.StatusCreated},
		{http.MethodPost, "/datasets/" + goldenID + "/training",
			`{"notes":%s}`,
			[]utf8Slot{slot("notes")}, http.StatusCreated},
		{http.MethodPost, "/evaluators",
			`{"name":%s,"kind":"regex","config":{"pattern":%s}}`,
			[]utf8Slot{slot("name"), {"config.pattern", func(r *rand.Rand, i int) string { return regexp.QuoteMeta(randomText(r, i)) }}}, http.StatusCreated},
		{http.MethodPatch, "/evaluators/" + evID,
			`{"name":%s}`,
			[]utf8Slot{slot("name")}, http.StatusOK},
		{http.MethodPost, "/evaluations",
			`{"dataset_id":%s,"evaluator_ids":[%s]}`,
			[]utf8Slot{{"dataset_id", fixedText(draftID)}, {"evaluator_ids[0]", fixedText(evID)}}, http.StatusCreated},
	}

	r := rand.New(rand.NewSource(20240611))
	refused := 0
	for i := 0; i < 200; i++ {
		ep := endpoints[r.Intn(len(endpoints))]
		args := make([]any, len(ep.slots))
		for k, s := range ep.slots {
			args[k] = jsonString(t, s.text(r, i))
		}
		mode := r.Intn(3)
		var bad string
		if mode == 1 {
			k := r.Intn(len(ep.slots))
			bad = ep.slots[k].param
			args[k] = withBadBytes(t, r, ep.slots[k].text(r, i), badSequences[r.Intn(len(badSequences))])
		}
		body := fmt.Sprintf(ep.template, args...)
		if mode == 2 {
			body = mutate(r, body)
		}
		what := fmt.Sprintf("#%d %s %s %q", i, ep.method, ep.path, body)
		status, out, _ := g.do(ep.method, ep.path, demoKey, body)
		assertUTF8JSON(t, what, out)
		switch {
		case mode == 0:
			if status != ep.want {
				t.Fatalf("%s: status %d, want %d: %s", what, status, ep.want, out)
			}
		case !utf8.ValidString(body):
			refused++
			if status != http.StatusBadRequest {
				t.Fatalf("%s: status %d, want 400: %s", what, status, out)
			}
			assertSpecError(t, out, "invalid_request_error", "-")
			// A bad byte in a string of a JSON body is named; one outside
			// every string leaves the body not JSON.
			if mode == 2 && json.Valid([]byte(body)) {
				bad, _ = translate.InvalidUTF8Param([]byte(body))
			}
			if bad != "" {
				assertSpecError(t, out, "invalid_request_error", bad)
				if c := gjson.GetBytes(out, "error.code").String(); c != translate.CodeInvalidUTF8 {
					t.Fatalf("%s: code %q, want %q: %s", what, c, translate.CodeInvalidUTF8, out)
				}
			}
		case status >= 500:
			t.Fatalf("%s: status %d: %s", what, status, out)
		}
	}
	t.Logf("%d of 200 bodies held bytes that are not UTF-8", refused)
	if refused < 50 {
		t.Fatalf("only %d of the bodies held bytes that are not UTF-8", refused)
	}

	// Every list, page by page, and every record it lists.
	records := map[string]string{"/calls": "/calls/", "/operations": "/operations/", "/datasets": "/datasets/",
		"/evaluators": "/evaluators/", "/evaluations": "/evaluations/"}
	lists := []string{"/models", "/calls", "/operations", "/datasets", "/evaluators", "/evaluations"}
	for n := 0; n < len(lists); n++ {
		list := lists[n]
		cursor := ""
		for {
			path := list + "?limit=200"
			if list == "/models" {
				path = list
			}
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			status, page, _ := g.do(http.MethodGet, path, demoKey, nil)
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, status, page)
			}
			assertUTF8JSON(t, "GET "+path, page)
			for _, rec := range gjson.GetBytes(page, "data").Array() {
				id := rec.Get("id").String()
				if prefix, ok := records[list]; ok {
					status, one, _ := g.do(http.MethodGet, prefix+id, demoKey, nil)
					if status != http.StatusOK {
						t.Fatalf("GET %s%s: %d %s", prefix, id, status, one)
					}
					assertUTF8JSON(t, "GET "+prefix+id, one)
				}
				if list == "/datasets" {
					lists = append(lists, "/datasets/"+id+"/items")
				}
			}
			if !gjson.GetBytes(page, "has_more").Bool() {
				break
			}
			cursor = gjson.GetBytes(page, "next_cursor").String()
		}
	}

	// The SDK parses the calls page.
	var calls struct {
		Object string `json:"object"`
		Data   []struct {
			ID              string         `json:"id"`
			Object          string         `json:"object"`
			Model           string         `json:"model"`
			RequestPayload  map[string]any `json:"request_payload"`
			ResponsePayload map[string]any `json:"response_payload"`
		} `json:"data"`
		HasMore bool `json:"has_more"`
	}
	client := openaiClient(g, demoKey)
	if err := client.Get(context.Background(), "calls", nil, &calls, option.WithQuery("limit", "200")); err != nil {
		t.Fatalf("SDK GET calls: %v", err)
	}
	if calls.Object != "list" || len(calls.Data) < 2 {
		t.Fatalf("SDK calls page: %+v", calls)
	}
	for _, c := range calls.Data {
		if c.Object != "call" || c.ID == "" || c.RequestPayload == nil {
			t.Fatalf("SDK call: %+v", c)
		}
		for _, m := range []map[string]any{c.RequestPayload, c.ResponsePayload} {
			if raw, err := json.Marshal(m); err != nil || strings.ContainsRune(string(raw), utf8.RuneError) {
				t.Fatalf("call %s payload decoded with replacement characters: %s %v", c.ID, raw, err)
			}
		}
	}
}
