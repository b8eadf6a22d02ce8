package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ModelCaller makes model calls through the gateway's own call path; the
// Caddy glue implements it. Scoring (llm_judge, embedding_match) and
// evaluations run against a model_version use it, so those calls are
// routed, recorded and billed like any other call of the org.
type ModelCaller interface {
	// Chat sends prompt as one user message to model for the org and
	// returns the assistant's text.
	Chat(ctx context.Context, orgID, model string, prompt string) (string, error)
	// Embed embeds each input with model for the org, one vector per
	// input, in order.
	Embed(ctx context.Context, orgID, model string, inputs []string) ([][]float64, error)
}

// ScoreInput is what an evaluator scores. Each field is a JSON value: a
// string, a chat-style messages array, or any other JSON, which is scored
// as its text (see the evaluator kinds). Absent fields are empty.
type ScoreInput struct {
	// Input is what was asked.
	Input json.RawMessage
	// Output is the answer being scored.
	Output json.RawMessage
	// ExpectedOutput is the reference answer, if any.
	ExpectedOutput json.RawMessage
}

// ErrUnscorable marks a Score error that is the item's fault, not the
// gateway's: a judge reply without a number, an item without the expected
// output a kind needs. Such an item fails on its own; other errors (a model
// call that failed) stop the evaluation they happen in.
var ErrUnscorable = errors.New("item cannot be scored")

// maxDetailText bounds the texts details repeat (a judge's reply, an error),
// so a long reply does not bloat every stored result.
const maxDetailText = 2000

// Score scores one item with the evaluator ev, for the org orgID, calling
// models for llm_judge and embedding_match. The score is 0 to 1, and details
// say how it came about. The evaluation worker and the eval pass both
// score through it.
func Score(ctx context.Context, models ModelCaller, ev Evaluator, orgID string, item ScoreInput) (score float64, details json.RawMessage, err error) {
	sc, err := newScorer(ev)
	if err != nil {
		return 0, nil, err
	}
	return sc.score(ctx, models, orgID, item)
}

// scorer is an evaluator with its config compiled, so scoring many items
// compiles a pattern or a schema once.
type scorer struct {
	ev  Evaluator
	cfg any
}

// newScorer compiles the evaluator's stored config.
func newScorer(ev Evaluator) (*scorer, error) {
	cfg, verr := parseConfig(ev.Kind, ev.Config)
	if verr != nil {
		return nil, fmt.Errorf("evaluator %s has an unusable config: %w", ev.ID, verr)
	}
	return &scorer{ev: ev, cfg: cfg}, nil
}

// score scores one item.
func (s *scorer) score(ctx context.Context, models ModelCaller, orgID string, item ScoreInput) (float64, json.RawMessage, error) {
	var (
		score   float64
		details map[string]any
		err     error
	)
	switch cfg := s.cfg.(type) {
	case regexConfig:
		score, details = scoreRegex(cfg, item)
	case jsonSchemaConfig:
		score, details = scoreJSONSchema(cfg, item)
	case llmJudgeConfig:
		score, details, err = scoreLLMJudge(ctx, models, orgID, cfg, item)
	case embeddingMatchConfig:
		score, details, err = scoreEmbeddingMatch(ctx, models, orgID, cfg, item)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("score with evaluator %s (%s): %w", s.ev.ID, s.ev.Kind, err)
	}
	data, err := json.Marshal(details)
	if err != nil {
		return 0, nil, fmt.Errorf("encode details of evaluator %s: %w", s.ev.ID, err)
	}
	return score, data, nil
}

func scoreRegex(cfg regexConfig, item ScoreInput) (float64, map[string]any) {
	var field json.RawMessage
	switch cfg.field {
	case fieldInput:
		field = item.Input
	case fieldExpectedOutput:
		field = item.ExpectedOutput
	default:
		field = item.Output
	}
	matched := cfg.re.MatchString(textOf(field))
	score := 0.0
	if matched != cfg.negate {
		score = 1
	}
	return score, map[string]any{"field": cfg.field, "matched": matched}
}

func scoreJSONSchema(cfg jsonSchemaConfig, item ScoreInput) (float64, map[string]any) {
	raw := item.Output
	// An answer is usually text that should hold JSON; a dataset's
	// expected output may be the JSON value itself.
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		raw = json.RawMessage(text)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return 0, map[string]any{"valid": false, "error": "output is empty, not JSON"}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return 0, map[string]any{"valid": false, "error": clip("output is not JSON: " + err.Error())}
	}
	if err := cfg.schema.Validate(doc); err != nil {
		return 0, map[string]any{"valid": false, "error": clip(err.Error())}
	}
	return 1, map[string]any{"valid": true}
}

// firstNumber finds the first number in a judge's reply.
var firstNumber = regexp.MustCompile(`[-+]?(?:\d+(?:\.\d+)?|\.\d+)`)

func scoreLLMJudge(ctx context.Context, models ModelCaller, orgID string, cfg llmJudgeConfig, item ScoreInput) (float64, map[string]any, error) {
	if models == nil {
		return 0, nil, errors.New("no model caller to ask the judge")
	}
	prompt := strings.NewReplacer(
		"{{input}}", textOf(item.Input),
		"{{output}}", textOf(item.Output),
		"{{expected_output}}", textOf(item.ExpectedOutput),
		"{{scale}}", strconv.Itoa(cfg.scale),
	).Replace(cfg.prompt)
	reply, err := models.Chat(ctx, orgID, cfg.model, prompt)
	if err != nil {
		return 0, nil, fmt.Errorf("ask judge model %s: %w", cfg.model, err)
	}
	m := firstNumber.FindString(reply)
	if m == "" {
		return 0, nil, fmt.Errorf("%w: the judge's reply has no number: %q", ErrUnscorable, clip(reply))
	}
	n, err := strconv.ParseFloat(m, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: the judge's number %q cannot be read: %v", ErrUnscorable, m, err)
	}
	score := math.Min(1, math.Max(0, n/float64(cfg.scale)))
	return score, map[string]any{"reply": clip(reply), "raw_score": n, "scale": cfg.scale}, nil
}

func scoreEmbeddingMatch(ctx context.Context, models ModelCaller, orgID string, cfg embeddingMatchConfig, item ScoreInput) (float64, map[string]any, error) {
	if models == nil {
		return 0, nil, errors.New("no model caller to embed with")
	}
	expected := textOf(item.ExpectedOutput)
	if expected == "" {
		return 0, nil, fmt.Errorf("%w: embedding_match needs an expected_output to compare with", ErrUnscorable)
	}
	vecs, err := models.Embed(ctx, orgID, cfg.model, []string{textOf(item.Output), expected})
	if err != nil {
		return 0, nil, fmt.Errorf("embed with model %s: %w", cfg.model, err)
	}
	if len(vecs) != 2 || len(vecs[0]) == 0 || len(vecs[0]) != len(vecs[1]) {
		return 0, nil, fmt.Errorf("embedding model %s returned %d vectors of unequal or zero length for 2 inputs", cfg.model, len(vecs))
	}
	sim := cosine(vecs[0], vecs[1])
	score := math.Max(0, sim)
	if score < cfg.threshold {
		score = 0
	}
	return score, map[string]any{"similarity": sim, "threshold": cfg.threshold}, nil
}

// cosine is the cosine similarity of two vectors of equal length; 0 when
// either is all zeros (such a vector points nowhere) or holds values that
// are not finite.
func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 || math.IsNaN(dot) || math.IsInf(dot, 0) {
		return 0
	}
	return math.Max(-1, math.Min(1, dot/(math.Sqrt(na)*math.Sqrt(nb))))
}

// clip shortens a text kept in details to maxDetailText characters.
func clip(s string) string {
	if textLen(s) <= maxDetailText {
		return s
	}
	r := []rune(s)
	return string(r[:maxDetailText]) + "…"
}
