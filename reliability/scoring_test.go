package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
)

// fakeModels is a deterministic ModelCaller:
//
//   - Chat with a model starting "fail/" fails with errModelDown.
//   - Chat with a model starting "judge/" grades: a prompt holding
//     "NO-NUMBER" gets the reply "I cannot grade this." (no number), one
//     holding "GOOD" gets "Score: 9", any other "Score: 3".
//   - Chat with any other model answers "echo: " followed by the prompt.
//   - Embed maps each input to the counts of the letters a to z in it,
//     lowercased: equal texts have similarity 1, texts with no letter in
//     common 0.
//
// When hold is set, Chat first waits for a value from it (or for the
// context to end), which lets a test stop an evaluation part-way.
type fakeModels struct {
	hold chan struct{}

	mu    sync.Mutex
	chats []fakeChat
	embed [][]string
}

// fakeChat is one Chat call seen by fakeModels.
type fakeChat struct {
	orgID, model, prompt string
}

// errModelDown is what fakeModels answers for "fail/" models.
var errModelDown = errors.New("model unavailable")

func (f *fakeModels) Chat(ctx context.Context, orgID, model, prompt string) (string, error) {
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	f.mu.Lock()
	f.chats = append(f.chats, fakeChat{orgID, model, prompt})
	f.mu.Unlock()
	switch {
	case strings.HasPrefix(model, "fail/"):
		return "", errModelDown
	case strings.HasPrefix(model, "judge/"):
		switch {
		case strings.Contains(prompt, "NO-NUMBER"):
			return "I cannot grade this.", nil
		case strings.Contains(prompt, "GOOD"):
			return "Score: 9", nil
		}
		return "Score: 3", nil
	}
	return "echo: " + prompt, nil
}

func (f *fakeModels) Embed(_ context.Context, _, _ string, inputs []string) ([][]float64, error) {
	f.mu.Lock()
	f.embed = append(f.embed, inputs)
	f.mu.Unlock()
	out := make([][]float64, len(inputs))
	for i, in := range inputs {
		v := make([]float64, 26)
		for _, r := range strings.ToLower(in) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

// calls returns the Chat calls seen so far.
func (f *fakeModels) calls() []fakeChat {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeChat(nil), f.chats...)
}

// evaluator builds an unsaved evaluator of kind with config.
func evaluator(kind, config string) Evaluator {
	return Evaluator{ID: "evr_test", OrgID: "org_test", Kind: kind, Config: json.RawMessage(config)}
}

// in builds a ScoreInput from JSON texts; "" leaves a field absent.
func in(input, output, expected string) ScoreInput {
	raw := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	return ScoreInput{Input: raw(input), Output: raw(output), ExpectedOutput: raw(expected)}
}

func TestScore(t *testing.T) {
	models := &fakeModels{}
	tests := []struct {
		name    string
		ev      Evaluator
		item    ScoreInput
		want    float64
		details string
	}{
		{"regex matches output", evaluator(KindRegex, `{"pattern":"^yes\\b"}`), in("", `"yes, sure"`, ""), 1, `{"field":"output","matched":true}`},
		{"regex misses", evaluator(KindRegex, `{"pattern":"^yes\\b"}`), in("", `"no"`, ""), 0, `{"field":"output","matched":false}`},
		{"regex negated", evaluator(KindRegex, `{"pattern":"sorry","negate":true}`), in("", `"sorry, no"`, ""), 0, `{"field":"output","matched":true}`},
		{"regex negated miss", evaluator(KindRegex, `{"pattern":"sorry","negate":true}`), in("", `"here it is"`, ""), 1, `{"field":"output","matched":false}`},
		{"regex on input messages", evaluator(KindRegex, `{"pattern":"refund","field":"input"}`),
			in(`[{"role":"user","content":[{"type":"text","text":"I want a refund"}]}]`, `"ok"`, ""), 1, `{"field":"input","matched":true}`},
		{"regex on expected", evaluator(KindRegex, `{"pattern":"^42$","field":"expected_output"}`), in("", `"x"`, `"42"`), 1, `{"field":"expected_output","matched":true}`},
		{"schema valid text", evaluator(KindJSONSchema, `{"schema":{"type":"object","required":["answer"]}}`), in("", `"{\"answer\":1}"`, ""), 1, `{"valid":true}`},
		{"schema valid value", evaluator(KindJSONSchema, `{"schema":{"type":"object","required":["answer"]}}`), in("", `{"answer":1}`, ""), 1, `{"valid":true}`},
		{"judge good", evaluator(KindLLMJudge, `{"model":"judge/a","prompt":"Q: {{input}} A: {{output}} R: {{expected_output}} /{{scale}}"}`),
			in(`"q"`, `"GOOD answer"`, `"ref"`), 0.9, `{"raw_score":9,"reply":"Score: 9","scale":10}`},
		{"judge scale 4 clamps", evaluator(KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}","scale":2}`),
			in("", `"GOOD"`, ""), 1, `{"raw_score":9,"reply":"Score: 9","scale":2}`},
		{"embedding equal", evaluator(KindEmbeddingMatch, `{"model":"embed/a"}`), in("", `"hello"`, `"hello"`), 1, ""},
		{"embedding disjoint", evaluator(KindEmbeddingMatch, `{"model":"embed/a"}`), in("", `"abc"`, `"xyz"`), 0, `{"similarity":0,"threshold":0}`},
		{"embedding under threshold", evaluator(KindEmbeddingMatch, `{"model":"embed/a","threshold":0.99}`), in("", `"hello"`, `"help"`), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, details, err := Score(context.Background(), models, tt.ev, "org_test", tt.item)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("score = %v, want %v (details %s)", got, tt.want, details)
			}
			if tt.details != "" && string(details) != tt.details {
				t.Fatalf("details = %s, want %s", details, tt.details)
			}
		})
	}
	chats := models.calls()
	if len(chats) == 0 || chats[0].prompt != "Q: q A: GOOD answer R: ref /10" || chats[0].orgID != "org_test" || chats[0].model != "judge/a" {
		t.Fatalf("judge prompt = %+v", chats)
	}
}

func TestScoreJSONSchemaInvalid(t *testing.T) {
	ev := evaluator(KindJSONSchema, `{"schema":{"type":"object","required":["answer"]}}`)
	for _, output := range []string{`"not json"`, `"{\"other\":1}"`, ``, `"[1]"`} {
		score, details, err := Score(context.Background(), nil, ev, "org", in("", output, ""))
		if err != nil || score != 0 || !strings.Contains(string(details), `"valid":false`) || !strings.Contains(string(details), `"error"`) {
			t.Errorf("output %s: %v, %s, %v", output, score, details, err)
		}
	}
}

func TestScoreJudgeWithoutNumberFailsTheItem(t *testing.T) {
	ev := evaluator(KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}"}`)
	_, _, err := Score(context.Background(), &fakeModels{}, ev, "org", in("", `"NO-NUMBER"`, ""))
	if !errors.Is(err, ErrUnscorable) || !strings.Contains(err.Error(), "I cannot grade this.") {
		t.Fatalf("err = %v, want ErrUnscorable quoting the reply", err)
	}
}

func TestScoreModelFailureIsNotUnscorable(t *testing.T) {
	tests := []struct {
		name   string
		models ModelCaller
		ev     Evaluator
	}{
		{"judge down", &fakeModels{}, evaluator(KindLLMJudge, `{"model":"fail/judge","prompt":"{{output}}"}`)},
		{"no model caller", nil, evaluator(KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}"}`)},
		{"no embedder", nil, evaluator(KindEmbeddingMatch, `{"model":"embed/a"}`)},
	}
	for _, tt := range tests {
		_, _, err := Score(context.Background(), tt.models, tt.ev, "org", in("", `"x"`, `"y"`))
		if err == nil || errors.Is(err, ErrUnscorable) {
			t.Errorf("%s: err = %v, want a failure that is not the item's", tt.name, err)
		}
	}
}

func TestScoreEmbeddingNeedsExpected(t *testing.T) {
	ev := evaluator(KindEmbeddingMatch, `{"model":"embed/a"}`)
	_, _, err := Score(context.Background(), &fakeModels{}, ev, "org", in("", `"x"`, ""))
	if !errors.Is(err, ErrUnscorable) {
		t.Fatalf("err = %v, want ErrUnscorable", err)
	}
}

// badEmbedder returns vectors that cannot be compared.
type badEmbedder struct{ *fakeModels }

func (badEmbedder) Embed(context.Context, string, string, []string) ([][]float64, error) {
	return [][]float64{{1, 2}}, nil
}

func TestScoreEmbeddingRejectsBadVectors(t *testing.T) {
	ev := evaluator(KindEmbeddingMatch, `{"model":"embed/a"}`)
	if _, _, err := Score(context.Background(), badEmbedder{&fakeModels{}}, ev, "org", in("", `"x"`, `"y"`)); err == nil {
		t.Fatal("one vector for two inputs was accepted")
	}
}

func TestScoreRejectsBadStoredConfig(t *testing.T) {
	if _, _, err := Score(context.Background(), nil, evaluator(KindRegex, `{"pattern":"("}`), "org", ScoreInput{}); err == nil {
		t.Fatal("a broken stored config scored")
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 0}, []float64{1, 0}, 1},
		{[]float64{1, 0}, []float64{0, 1}, 0},
		{[]float64{1, 0}, []float64{-1, 0}, -1},
		{[]float64{0, 0}, []float64{1, 0}, 0},
		{[]float64{math.NaN(), 0}, []float64{1, 0}, 0},
	}
	for _, tt := range tests {
		if got := cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxDetailText+10)
	if got := clip(long); textLen(got) != maxDetailText+1 || !strings.HasSuffix(got, "…") {
		t.Fatalf("clip kept %d characters", textLen(got))
	}
	if clip("short") != "short" {
		t.Fatal("clip changed a short text")
	}
}
