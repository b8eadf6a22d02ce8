package reliability

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseConfigRules(t *testing.T) {
	tests := []struct {
		kind, config string
		param        string // "" when valid
		code         string
	}{
		{KindRegex, `{"pattern":"a+"}`, "", ""},
		{KindRegex, `{"pattern":"a+","field":"input","negate":true}`, "", ""},
		{KindRegex, `{}`, "config.pattern", CodeMissingParameter},
		{KindRegex, `{"pattern":""}`, "config.pattern", CodeInvalidValue},
		{KindRegex, `{"pattern":"("}`, "config.pattern", CodeInvalidValue},
		{KindRegex, `{"pattern":"a(?=b)"}`, "config.pattern", CodeInvalidValue},
		{KindRegex, `{"pattern":7}`, "config.pattern", CodeInvalidValue},
		{KindRegex, `{"pattern":"a","field":"prompt"}`, "config.field", CodeInvalidValue},
		{KindRegex, `{"pattern":"a","negate":"yes"}`, "config.negate", CodeInvalidValue},
		{KindRegex, `{"pattern":"a","flags":"i"}`, "config.flags", CodeUnknownParameter},
		{KindRegex, `[]`, "config", CodeInvalidValue},
		{KindRegex, `"a+"`, "config", CodeInvalidValue},
		{KindJSONSchema, `{"schema":{"type":"object"}}`, "", ""},
		{KindJSONSchema, `{"schema":{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}}`, "", ""},
		{KindJSONSchema, `{}`, "config.schema", CodeMissingParameter},
		{KindJSONSchema, `{"schema":true}`, "config.schema", CodeInvalidValue},
		{KindJSONSchema, `{"schema":{"type":"nonsense"}}`, "config.schema", CodeInvalidValue},
		{KindJSONSchema, `{"schema":{"$ref":"file:///etc/passwd"}}`, "config.schema", CodeInvalidValue},
		{KindJSONSchema, `{"schema":{"$ref":"https://example.com/s.json"}}`, "config.schema", CodeInvalidValue},
		{KindLLMJudge, `{"model":"judge/a","prompt":"rate {{output}}"}`, "", ""},
		{KindLLMJudge, `{"model":"judge/a","prompt":"rate {{output}}","scale":5}`, "", ""},
		{KindLLMJudge, `{"prompt":"rate {{output}}"}`, "config.model", CodeMissingParameter},
		{KindLLMJudge, `{"model":"","prompt":"rate {{output}}"}`, "config.model", CodeInvalidValue},
		{KindLLMJudge, `{"model":"judge/a"}`, "config.prompt", CodeMissingParameter},
		{KindLLMJudge, `{"model":"judge/a","prompt":"rate it"}`, "config.prompt", CodeInvalidValue},
		{KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}","scale":1}`, "config.scale", CodeInvalidValue},
		{KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}","scale":2.5}`, "config.scale", CodeInvalidValue},
		{KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}","scale":"10"}`, "config.scale", CodeInvalidValue},
		{KindEmbeddingMatch, `{"model":"embed/a"}`, "", ""},
		{KindEmbeddingMatch, `{"model":"embed/a","threshold":0.8}`, "", ""},
		{KindEmbeddingMatch, `{"threshold":0.8}`, "config.model", CodeMissingParameter},
		{KindEmbeddingMatch, `{"model":"embed/a","threshold":1.5}`, "config.threshold", CodeInvalidValue},
		{KindEmbeddingMatch, `{"model":"embed/a","threshold":-0.1}`, "config.threshold", CodeInvalidValue},
		{"keyword", `{}`, "kind", CodeInvalidValue},
	}
	for _, tt := range tests {
		_, verr := parseConfig(tt.kind, json.RawMessage(tt.config))
		switch {
		case tt.param == "" && verr != nil:
			t.Errorf("%s %s: %v", tt.kind, tt.config, verr)
		case tt.param != "" && verr == nil:
			t.Errorf("%s %s: accepted, want %s", tt.kind, tt.config, tt.param)
		case tt.param != "" && (verr.Param != tt.param || verr.Code != tt.code):
			t.Errorf("%s %s: %s (%s), want %s (%s): %v", tt.kind, tt.config, verr.Param, verr.Code, tt.param, tt.code, verr)
		}
	}
}

func TestEvaluatorCRUD(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	opA := &Operation{OrgID: a.ID, Key: "triage", Name: "T"}
	opB := &Operation{OrgID: b.ID, Key: "triage", Name: "T"}
	for _, op := range []*Operation{opA, opB} {
		if err := s.CreateOperation(op); err != nil {
			t.Fatal(err)
		}
	}
	ev := Evaluator{OrgID: a.ID, Name: "yes", Kind: KindRegex, Config: json.RawMessage(`{ "pattern" : "yes" }`), OperationID: &opA.ID}
	if err := s.CreateEvaluator(&ev); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev.ID, "evr_") || ev.Object != ObjectEvaluator || string(ev.Config) != `{"pattern":"yes"}` || ev.CreatedAt.IsZero() {
		t.Fatalf("created %+v", ev)
	}
	bad := Evaluator{OrgID: a.ID, Name: "bad", Kind: KindRegex, Config: json.RawMessage(`{"pattern":"("}`)}
	var verr *ValidationError
	if err := s.CreateEvaluator(&bad); !errors.As(err, &verr) || verr.Param != "config.pattern" {
		t.Fatalf("bad config: %v", err)
	}
	foreign := Evaluator{OrgID: a.ID, Name: "x", Kind: KindRegex, Config: json.RawMessage(`{"pattern":"x"}`), OperationID: &opB.ID}
	if err := s.CreateEvaluator(&foreign); !errors.Is(err, ErrForbidden) {
		t.Fatalf("another org's operation: %v", err)
	}

	renamed := "yes or no"
	got, err := s.UpdateEvaluator(ev.ID, EvaluatorUpdate{Name: &renamed, SetOperationID: true, Config: json.RawMessage(`{"pattern":"^(yes|no)$"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != renamed || got.OperationID != nil || got.Kind != KindRegex || string(got.Config) != `{"pattern":"^(yes|no)$"}` {
		t.Fatalf("updated %+v", got)
	}
	if _, err := s.UpdateEvaluator(ev.ID, EvaluatorUpdate{Config: json.RawMessage(`{"schema":{}}`)}); !errors.As(err, &verr) || verr.Param != "config.schema" {
		t.Fatalf("a config of another kind: %v", err)
	}
	if _, err := s.UpdateEvaluator(ev.ID, EvaluatorUpdate{SetOperationID: true, OperationID: &opB.ID}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("moving to another org's operation: %v", err)
	}
	if _, err := s.UpdateEvaluator("evr_missing", EvaluatorUpdate{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing evaluator: %v", err)
	}
	stored, _ := s.Evaluator(ev.ID)
	if stored.Name != renamed {
		t.Fatalf("stored %+v", stored)
	}
	page, err := s.ListEvaluators(a.ID, PageQuery{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != ev.ID {
		t.Fatalf("list = %+v, %v", page, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(KindRegex, `{"pattern":"a+","field":"input"}`)
	f.Add(KindJSONSchema, `{"schema":{"type":"object","properties":{"a":{"$ref":"#"}}}}`)
	f.Add(KindLLMJudge, `{"model":"m","prompt":"{{output}}","scale":3}`)
	f.Add(KindEmbeddingMatch, `{"model":"m","threshold":0.5}`)
	f.Fuzz(func(t *testing.T, kind, config string) {
		cfg, verr := parseConfig(kind, json.RawMessage(config))
		if verr == nil && cfg == nil {
			t.Fatal("a config was accepted without being compiled")
		}
		if verr != nil && verr.Param != "kind" && !strings.HasPrefix(verr.Param, "config") {
			t.Fatalf("param %q is not under config", verr.Param)
		}
	})
}
