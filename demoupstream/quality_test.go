package demoupstream

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestModelQuality(t *testing.T) {
	tests := []struct {
		model  string
		q      int
		graded bool
	}{
		{"demo-cheap-q80", 80, true},
		{"demo-q0", 0, true},
		{"demo-q100", 100, true},
		{"demo-q007", 7, true},
		{"demo-q7-mini", 7, true},
		{"demo/demo-mid-q97", 97, true},
		{"demo-q-q50", 50, true},
		{"demo-chat", 0, false},
		{"demo-quick", 0, false},
		{"demo-q", 0, false},
		{"demo-q101", 0, false},
		{"demo-q1000", 0, false},
		{"demo-q80b", 0, false},
		{"demoq80", 0, false},
	}
	for _, tc := range tests {
		q, graded := modelQuality(tc.model)
		if q != tc.q || graded != tc.graded {
			t.Errorf("modelQuality(%q) = %d, %v; want %d, %v", tc.model, q, graded, tc.q, tc.graded)
		}
	}
}

func TestPromptBucketDerivation(t *testing.T) {
	sum := sha256.Sum256([]byte("demo-q50\x00hello world"))
	want := int(binary.BigEndian.Uint64(sum[:8]) % 100)
	if got := promptBucket("demo-q50", "hello world"); got != want {
		t.Errorf("promptBucket = %d, want %d", got, want)
	}
}

func TestGradedShare(t *testing.T) {
	const prompts = 1000
	for _, q := range []int{0, 10, 50, 85, 90, 97, 100} {
		model := fmt.Sprintf("demo-cheap-q%d", q)
		correct := 0
		for i := range prompts {
			r := answer(&turn{model: model, userText: fmt.Sprintf("question %d about things", i)})
			switch {
			case strings.HasPrefix(r.text, "Echo: "):
				correct++
			case !strings.HasPrefix(r.text, "Wrong: "):
				t.Fatalf("%s: reply %q is neither right nor wrong", model, r.text)
			}
		}
		pct := correct * 100 / prompts
		if pct < q-5 || pct > q+5 {
			t.Errorf("%s: %d%% correct over %d prompts, want %d±5", model, pct, prompts, q)
		}
		if (q == 0 && correct != 0) || (q == 100 && correct != prompts) {
			t.Errorf("%s: %d of %d correct", model, correct, prompts)
		}
	}
}

func TestGradedDeterministic(t *testing.T) {
	// The same model and text always give the same answer, and directives
	// or extra spaces do not change which answer it is.
	for i := range 200 {
		text := fmt.Sprintf("prompt %d", i)
		first := answer(&turn{model: "demo-q50", userText: text}).text
		again := answer(&turn{model: "demo-q50", userText: "  " + text + " [[sleep:0]] "}).text
		if first != again {
			t.Fatalf("%q: %q then %q", text, first, again)
		}
	}
	// The grade is per model: another model of the same grade gets other
	// prompts wrong.
	differs := false
	for i := range 200 {
		text := fmt.Sprintf("prompt %d", i)
		if answer(&turn{model: "demo-a-q50", userText: text}).text != answer(&turn{model: "demo-b-q50", userText: text}).text {
			differs = true
			break
		}
	}
	if !differs {
		t.Error("two models of grade 50 answer 200 prompts identically")
	}
}

func TestGradedKeepsUsageAndUngradedReplies(t *testing.T) {
	weather := tool{name: "get_weather", schema: gjson.Parse(`{"properties":{"city":{"type":"string"}}}`)}
	wrong := answer(&turn{model: "demo-q0", userText: "hi there", inputWords: 2})
	right := answer(&turn{model: "demo-chat", userText: "hi there", inputWords: 2})
	if wrong.text != "Wrong: hi there" || right.text != "Echo: hi there" {
		t.Fatalf("texts %q and %q", wrong.text, right.text)
	}
	if wrong.inputTokens != right.inputTokens || wrong.outputTokens != right.outputTokens {
		t.Errorf("usage differs: %d/%d vs %d/%d", wrong.inputTokens, wrong.outputTokens, right.inputTokens, right.outputTokens)
	}
	if r := answer(&turn{model: "demo-q0"}); r.text != "Wrong:" {
		t.Errorf("empty text: %q", r.text)
	}
	if r := answer(&turn{model: "demo-q0", userText: "[[words:2]]"}); r.text != "w1 w2" {
		t.Errorf("words: %q", r.text)
	}
	if r := answer(&turn{model: "demo-q0", endsWithToolResult: true, toolResult: "21 C"}); r.text != "Tool result: 21 C" {
		t.Errorf("tool result: %q", r.text)
	}
	if r := answer(&turn{model: "demo-q0", userText: "Paris", tools: []tool{weather}}); r.call == nil || r.call.arguments != `{"city":"Paris"}` {
		t.Errorf("tool call: %+v", r.call)
	}
}

func TestGradedOverHTTP(t *testing.T) {
	srv := serve(t, Config{})
	// A wrong answer travels like a right one: the same body shape and
	// usage, and in a stream the same pieces.
	body := `{"model":"demo-q0","messages":[{"role":"user","content":"two words"}]}`
	ex := call(t, srv, http.MethodPost, "/v1/chat/completions", body)
	if ex.status != http.StatusOK || gjson.Get(ex.body, "choices.0.message.content").String() != "Wrong: two words" ||
		gjson.Get(ex.body, "usage.completion_tokens").Int() != 3 {
		t.Fatalf("%d %s", ex.status, ex.body)
	}
	stream := `{"model":"demo-q0","stream":true,"messages":[{"role":"user","content":"two words"}]}`
	ex = call(t, srv, http.MethodPost, "/v1/chat/completions", stream)
	var text strings.Builder
	for line := range strings.SplitSeq(ex.body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if ok && data != "[DONE]" {
			text.WriteString(gjson.Get(data, "choices.0.delta.content").String())
		}
	}
	if text.String() != "Wrong: two words" {
		t.Errorf("streamed %q", text.String())
	}
	msg := `{"model":"demo-q100","max_tokens":10,"messages":[{"role":"user","content":"two words"}]}`
	ex = call(t, srv, http.MethodPost, "/v1/messages", msg, anthropicHeaders...)
	if got := gjson.Get(ex.body, "content.0.text").String(); got != "Echo: two words" {
		t.Errorf("anthropic: %q", got)
	}
}
