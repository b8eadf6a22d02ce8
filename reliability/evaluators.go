package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	bolt "go.etcd.io/bbolt"
)

// ObjectEvaluator is the object tag of an Evaluator (SPEC 2.12).
const ObjectEvaluator = "evaluator"

// Evaluator kinds (SPEC 2.12). The config each takes is documented here,
// since the SPEC leaves it free-form; a config is checked when an evaluator
// is created or updated, and a violation names its field ("config.pattern").
// Every kind scores an item from 0 to 1.
//
// regex matches a pattern against one field of the item:
//
//	{"pattern": "^yes\\b",          required: an RE2 pattern (Go's regexp syntax)
//	 "field":   "output",           optional: "output" (default), "expected_output" or "input"
//	 "negate":  false}              optional: true scores a match 0 and no match 1
//
// The score is 1 when the pattern matches the field's text, else 0 (the
// other way round with negate).
//
// json_schema checks that the output is JSON valid under a schema:
//
//	{"schema": {"type": "object", "required": ["answer"]}}   required: a JSON Schema object
//
// The schema is compiled when the evaluator is stored (draft 2020-12 unless
// it names another with "$schema"; references to other documents are not
// loaded). An output given as a string must parse as JSON; the score is 1
// when the value validates, else 0, with the reason in details.
//
// llm_judge asks a model to grade the output:
//
//	{"model":  "openai/gpt-4o-mini",                       required: the judging model
//	 "prompt": "Question: {{input}}\nAnswer: {{output}}\n" +
//	           "Reference: {{expected_output}}\nGrade 0 to {{scale}}.",
//	                                                       required: must contain {{output}}
//	 "scale":  10}                                         optional: integer >= 2, default 10
//
// The prompt's placeholders {{input}}, {{output}}, {{expected_output}} and
// {{scale}} are replaced by the item's text, and the model's reply is read
// for its first number n: the score is n/scale, clamped to 0..1. A reply
// without a number fails that item with the reply as the reason; it is
// never read as 0.
//
// embedding_match compares the output with the expected output by meaning:
//
//	{"model":     "openai/text-embedding-3-small",   required: the embedding model
//	 "threshold": 0.8}                               optional: 0 to 1, default 0
//
// Both texts are embedded in one call; the score is their cosine
// similarity, a negative similarity counting as 0, and 0 when it is under
// the threshold. An item without an expected output cannot be scored.
const (
	// KindRegex matches a pattern.
	KindRegex = "regex"
	// KindJSONSchema validates JSON output against a schema.
	KindJSONSchema = "json_schema"
	// KindLLMJudge has a model grade the output.
	KindLLMJudge = "llm_judge"
	// KindEmbeddingMatch compares output and expected output by embedding.
	KindEmbeddingMatch = "embedding_match"
)

// evaluatorKinds lists the kinds in the order error messages name them.
var evaluatorKinds = []string{KindRegex, KindJSONSchema, KindLLMJudge, KindEmbeddingMatch}

// Bounds on evaluator configs, far above real use, so that a config cannot
// make every scoring expensive.
const (
	maxPatternLen = 4096
	maxModelLen   = 256
	maxPromptLen  = 64000
	maxJudgeScale = 1000000
)

// Fields a regex evaluator can match against.
const (
	fieldOutput         = "output"
	fieldExpectedOutput = "expected_output"
	fieldInput          = "input"
)

// Evaluator scores dataset items and served calls (SPEC 2.12).
type Evaluator struct {
	// ID is the evaluator's id, prefix "evr_".
	ID string `json:"id"`
	// Object is always "evaluator".
	Object string `json:"object"`
	// OrgID is the org that owns the evaluator.
	OrgID string `json:"org_id"`
	// OperationID is the operation the evaluator belongs to, or nil.
	OperationID *string `json:"operation_id"`
	// Name is the evaluator's display name.
	Name string `json:"name"`
	// Kind is one of the Kind constants; it never changes.
	Kind string `json:"kind"`
	// Config is the kind's configuration, documented with the kinds.
	Config json.RawMessage `json:"config"`
	// CreatedAt is when the evaluator was created.
	CreatedAt time.Time `json:"created_at"`
}

// regexConfig is the config of a regex evaluator.
type regexConfig struct {
	re     *regexp.Regexp
	field  string
	negate bool
}

// jsonSchemaConfig is the config of a json_schema evaluator.
type jsonSchemaConfig struct {
	schema *jsonschema.Schema
}

// llmJudgeConfig is the config of an llm_judge evaluator.
type llmJudgeConfig struct {
	model  string
	prompt string
	scale  int
}

// embeddingMatchConfig is the config of an embedding_match evaluator.
type embeddingMatchConfig struct {
	model     string
	threshold float64
}

// parseConfig checks a config for an evaluator of kind, and compiles it
// into one of the config types above, ready to score with. A violation
// names its field under "config", or "kind" for an unknown kind.
func parseConfig(kind string, config json.RawMessage) (any, *ValidationError) {
	if !validKind(kind) {
		return nil, invalid("kind", "must be one of %s", strings.Join(evaluatorKinds, ", "))
	}
	obj, verr := parseObject(config)
	if verr != nil {
		return nil, invalid("config", "must be an object")
	}
	var cfg any
	switch kind {
	case KindRegex:
		cfg, verr = parseRegexConfig(obj)
	case KindJSONSchema:
		cfg, verr = parseJSONSchemaConfig(obj)
	case KindLLMJudge:
		cfg, verr = parseLLMJudgeConfig(obj)
	case KindEmbeddingMatch:
		cfg, verr = parseEmbeddingMatchConfig(obj)
	}
	if verr != nil {
		return nil, under("config", verr)
	}
	return cfg, nil
}

// validKind reports whether kind is one of the evaluator kinds.
func validKind(kind string) bool {
	for _, k := range evaluatorKinds {
		if k == kind {
			return true
		}
	}
	return false
}

func parseRegexConfig(obj jsonObject) (any, *ValidationError) {
	if verr := obj.allow("pattern", "field", "negate"); verr != nil {
		return nil, verr
	}
	if verr := obj.required("pattern"); verr != nil {
		return nil, verr
	}
	pattern, _, verr := obj.text("pattern", 1, maxPatternLen)
	if verr != nil {
		return nil, verr
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, invalid("pattern", "is not an RE2 pattern: %v", err)
	}
	cfg := regexConfig{re: re, field: fieldOutput}
	if obj.has("field") {
		field, _, verr := obj.str("field")
		if verr == nil && field != fieldOutput && field != fieldExpectedOutput && field != fieldInput {
			verr = invalid("field", "must be one of %s, %s, %s", fieldOutput, fieldExpectedOutput, fieldInput)
		}
		if verr != nil {
			return nil, verr
		}
		cfg.field = field
	}
	if cfg.negate, _, verr = obj.boolean("negate"); verr != nil {
		return nil, verr
	}
	return cfg, nil
}

// schemaURL is the name a json_schema config's schema is compiled under;
// it resolves nowhere, so a schema can only refer to itself.
const schemaURL = "mem://evaluator/config.schema.json"

func parseJSONSchemaConfig(obj jsonObject) (any, *ValidationError) {
	if verr := obj.allow("schema"); verr != nil {
		return nil, verr
	}
	if verr := obj.required("schema"); verr != nil {
		return nil, verr
	}
	if _, _, verr := obj.object("schema"); verr != nil {
		return nil, verr
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(obj.raw("schema")))
	if err != nil {
		return nil, invalid("schema", "is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	// No loader: a schema that refers to a file or a URL is refused rather
	// than have the gateway read files or fetch URLs on a client's behalf.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, invalid("schema", "cannot be used: %v", err)
	}
	schema, err := c.Compile(schemaURL)
	if err != nil {
		return nil, invalid("schema", "is not a valid JSON Schema: %v", err)
	}
	return jsonSchemaConfig{schema: schema}, nil
}

func parseLLMJudgeConfig(obj jsonObject) (any, *ValidationError) {
	if verr := obj.allow("model", "prompt", "scale"); verr != nil {
		return nil, verr
	}
	cfg := llmJudgeConfig{scale: 10}
	var verr *ValidationError
	if verr = obj.required("model"); verr != nil {
		return nil, verr
	}
	if cfg.model, _, verr = obj.text("model", 1, maxModelLen); verr != nil {
		return nil, verr
	}
	if verr = obj.required("prompt"); verr != nil {
		return nil, verr
	}
	if cfg.prompt, _, verr = obj.text("prompt", 1, maxPromptLen); verr != nil {
		return nil, verr
	}
	if !strings.Contains(cfg.prompt, "{{output}}") {
		return nil, invalid("prompt", "must contain {{output}}, where the output to judge goes")
	}
	if obj.has("scale") {
		if cfg.scale, _, verr = obj.integer("scale", 2, maxJudgeScale); verr != nil {
			return nil, verr
		}
	}
	return cfg, nil
}

func parseEmbeddingMatchConfig(obj jsonObject) (any, *ValidationError) {
	if verr := obj.allow("model", "threshold"); verr != nil {
		return nil, verr
	}
	var cfg embeddingMatchConfig
	var verr *ValidationError
	if verr = obj.required("model"); verr != nil {
		return nil, verr
	}
	if cfg.model, _, verr = obj.text("model", 1, maxModelLen); verr != nil {
		return nil, verr
	}
	if cfg.threshold, _, verr = obj.num("threshold", 0, 1); verr != nil {
		return nil, verr
	}
	return cfg, nil
}

// compactConfig stores a config without insignificant whitespace.
func compactConfig(config json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, config); err != nil {
		return nil, fmt.Errorf("compact config: %w", err)
	}
	return buf.Bytes(), nil
}

// CreateEvaluator stores ev as a new evaluator of ev.OrgID after checking
// its kind and config (a ValidationError). It assigns ID and Object, and
// CreatedAt when zero. An operation, when given, must exist (ErrNotFound)
// and belong to the org (ErrForbidden).
func (s *BoltStore) CreateEvaluator(ev *Evaluator) error {
	if ev == nil {
		return errors.New("create evaluator: evaluator is nil")
	}
	if _, verr := parseConfig(ev.Kind, ev.Config); verr != nil {
		return fmt.Errorf("create evaluator: %w", verr)
	}
	created := *ev
	created.ID = NewID("evr_")
	created.Object = ObjectEvaluator
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	var err error
	if created.Config, err = compactConfig(created.Config); err != nil {
		return fmt.Errorf("create evaluator: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(created.OrgID)) == nil {
			return fmt.Errorf("org %s: %w", created.OrgID, ErrNotFound)
		}
		if created.OperationID != nil {
			if err := checkOperationOf(tx, created.OrgID, *created.OperationID); err != nil {
				return err
			}
		}
		if err := putJSON(tx.Bucket(bucketEvaluators), []byte(created.ID), created); err != nil {
			return err
		}
		return putIndex(tx.Bucket(bucketEvaluatorsByOrg), indexPrefix(created.OrgID), created.CreatedAt, created.ID)
	})
	if err != nil {
		return fmt.Errorf("create evaluator in org %s: %w", ev.OrgID, err)
	}
	*ev = created
	return nil
}

// Evaluator returns the evaluator with this id.
func (s *BoltStore) Evaluator(id string) (Evaluator, error) {
	var ev Evaluator
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketEvaluators), []byte(id), &ev)
	})
	if err != nil {
		return Evaluator{}, fmt.Errorf("evaluator %s: %w", id, err)
	}
	return ev, nil
}

// ListEvaluators lists the org's evaluators newest first.
func (s *BoltStore) ListEvaluators(orgID string, p PageQuery) (Page[Evaluator], error) {
	page, err := listIndexed[Evaluator](s, bucketEvaluatorsByOrg, bucketEvaluators, indexPrefix(orgID), p)
	if err != nil {
		return Page[Evaluator]{}, fmt.Errorf("list evaluators of org %s: %w", orgID, err)
	}
	return page, nil
}

// EvaluatorUpdate is a partial change to an evaluator: nil fields are left
// as they are. The kind is not among them: it never changes, since the
// scores already recorded were made by it.
type EvaluatorUpdate struct {
	// Name, when set, replaces the name.
	Name *string
	// OperationID, when SetOperationID is true, replaces the operation;
	// nil detaches the evaluator from any.
	OperationID *string
	// SetOperationID tells a detached evaluator from an unchanged one.
	SetOperationID bool
	// Config, when set, replaces the config; it is checked against the
	// evaluator's kind.
	Config json.RawMessage
}

// UpdateEvaluator applies u to the evaluator with this id in one
// transaction. A config that does not suit the kind is a ValidationError;
// an operation must exist (ErrNotFound) in the evaluator's org
// (ErrForbidden).
func (s *BoltStore) UpdateEvaluator(id string, u EvaluatorUpdate) (Evaluator, error) {
	var ev Evaluator
	err := s.db.Update(func(tx *bolt.Tx) error {
		evaluators := tx.Bucket(bucketEvaluators)
		if err := getJSON(evaluators, []byte(id), &ev); err != nil {
			return err
		}
		if u.Name != nil {
			ev.Name = *u.Name
		}
		if u.SetOperationID {
			if u.OperationID != nil {
				if err := checkOperationOf(tx, ev.OrgID, *u.OperationID); err != nil {
					return err
				}
			}
			ev.OperationID = u.OperationID
		}
		if u.Config != nil {
			if _, verr := parseConfig(ev.Kind, u.Config); verr != nil {
				return verr
			}
			config, err := compactConfig(u.Config)
			if err != nil {
				return err
			}
			ev.Config = config
		}
		return putJSON(evaluators, []byte(ev.ID), ev)
	})
	if err != nil {
		return Evaluator{}, fmt.Errorf("update evaluator %s: %w", id, err)
	}
	return ev, nil
}
