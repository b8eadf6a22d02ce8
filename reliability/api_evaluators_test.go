package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAPIEvaluatorLifecycle(t *testing.T) {
	h := newAPIHarness(t)
	op := h.create("", "/operations", `{"key":"support","name":"S"}`)
	configs := map[string]string{
		KindRegex:          `{"pattern":"^yes","field":"output","negate":false}`,
		KindJSONSchema:     `{"schema":{"type":"object","required":["answer"]}}`,
		KindLLMJudge:       `{"model":"judge/a","prompt":"Grade {{output}} against {{expected_output}}","scale":5}`,
		KindEmbeddingMatch: `{"model":"embed/a","threshold":0.7}`,
	}
	for kind, config := range configs {
		ev := h.create("", "/evaluators", fmt.Sprintf(`{"name":"%s check","kind":%q,"config":%s,"operation_id":"support"}`, kind, kind, config))
		assertKeys(t, ev, "id", "object", "org_id", "operation_id", "name", "kind", "config", "created_at")
		if !strings.HasPrefix(ev["id"].(string), "evr_") || ev["object"] != "evaluator" || ev["org_id"] != h.org.ID ||
			ev["operation_id"] != op["id"] || ev["kind"] != kind || ev["name"] != kind+" check" {
			t.Fatalf("created %v", ev)
		}
		assertTime(t, ev["created_at"])
		if _, ok := ev["config"].(map[string]any); !ok {
			t.Fatalf("config = %v", ev["config"])
		}
	}
	ev := h.create("", "/evaluators", `{"name":"plain","kind":"regex","config":{"pattern":"x"}}`)
	if ev["operation_id"] != nil {
		t.Fatalf("operation_id = %v, want null", ev["operation_id"])
	}
	path := "/evaluators/" + ev["id"].(string)
	status, got := h.call(http.MethodPatch, path, fmt.Sprintf(`{"name":"renamed","operation_id":%q,"config":{"pattern":"y","negate":true}}`, op["id"]))
	if status != http.StatusOK || got["name"] != "renamed" || got["operation_id"] != op["id"] || got["kind"] != "regex" ||
		got["config"].(map[string]any)["pattern"] != "y" {
		t.Fatalf("PATCH = %d %v", status, got)
	}
	status, got = h.call(http.MethodPatch, path, `{"operation_id":null}`)
	if status != http.StatusOK || got["operation_id"] != nil || got["name"] != "renamed" {
		t.Fatalf("PATCH operation_id null = %d %v", status, got)
	}
	status, got = h.call(http.MethodGet, path, "")
	if status != http.StatusOK || got["name"] != "renamed" {
		t.Fatalf("GET = %d %v", status, got)
	}
}

func TestAPIEvaluatorLimits(t *testing.T) {
	h := newAPIHarness(t)
	theirs := h.create("other", "/operations", `{"key":"theirs","name":"T"}`)
	tests := []struct {
		body, status, param, code string
	}{
		{`{"kind":"regex","config":{"pattern":"x"}}`, "400", "name", CodeMissingParameter},
		{`{"name":"","kind":"regex","config":{"pattern":"x"}}`, "400", "name", CodeInvalidValue},
		{`{"name":"` + strings.Repeat("n", 257) + `","kind":"regex","config":{"pattern":"x"}}`, "400", "name", CodeInvalidValue},
		{`{"name":"n","config":{"pattern":"x"}}`, "400", "kind", CodeMissingParameter},
		{`{"name":"n","kind":"keyword","config":{}}`, "400", "kind", CodeInvalidValue},
		{`{"name":"n","kind":1,"config":{}}`, "400", "kind", CodeInvalidValue},
		{`{"name":"n","kind":"regex"}`, "400", "config", CodeMissingParameter},
		{`{"name":"n","kind":"regex","config":"x"}`, "400", "config", CodeInvalidValue},
		{`{"name":"n","kind":"regex","config":{}}`, "400", "config.pattern", CodeMissingParameter},
		{`{"name":"n","kind":"regex","config":{"pattern":"(("}}`, "400", "config.pattern", CodeInvalidValue},
		{`{"name":"n","kind":"regex","config":{"pattern":"x","field":"body"}}`, "400", "config.field", CodeInvalidValue},
		{`{"name":"n","kind":"regex","config":{"pattern":"x","case":"i"}}`, "400", "config.case", CodeUnknownParameter},
		{`{"name":"n","kind":"json_schema","config":{"schema":{"type":12}}}`, "400", "config.schema", CodeInvalidValue},
		{`{"name":"n","kind":"json_schema","config":{"schema":"object"}}`, "400", "config.schema", CodeInvalidValue},
		{`{"name":"n","kind":"llm_judge","config":{"prompt":"{{output}}"}}`, "400", "config.model", CodeMissingParameter},
		{`{"name":"n","kind":"llm_judge","config":{"model":"m","prompt":"no placeholder"}}`, "400", "config.prompt", CodeInvalidValue},
		{`{"name":"n","kind":"llm_judge","config":{"model":"m","prompt":"{{output}}","scale":1}}`, "400", "config.scale", CodeInvalidValue},
		{`{"name":"n","kind":"embedding_match","config":{"model":"m","threshold":2}}`, "400", "config.threshold", CodeInvalidValue},
		{`{"name":"n","kind":"embedding_match","config":{}}`, "400", "config.model", CodeMissingParameter},
		{`{"name":"n","kind":"regex","config":{"pattern":"x"},"operation_id":"op_missing"}`, "404", "operation_id", "not_found"},
		{fmt.Sprintf(`{"name":"n","kind":"regex","config":{"pattern":"x"},"operation_id":%q}`, theirs["id"]), "403", "operation_id", "forbidden"},
		{`{"name":"n","kind":"regex","config":{"pattern":"x"},"operation_id":7}`, "400", "operation_id", CodeInvalidValue},
	}
	for _, tt := range tests {
		status, m := h.call(http.MethodPost, "/evaluators", tt.body)
		switch tt.status {
		case "400":
			wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, tt.code)
		case "404":
			wantError(t, status, m, http.StatusNotFound, ErrorTypeNotFound, tt.param, tt.code)
		case "403":
			wantError(t, status, m, http.StatusForbidden, ErrorTypePermission, tt.param, tt.code)
		}
	}

	ev := h.create("", "/evaluators", `{"name":"n","kind":"regex","config":{"pattern":"x"}}`)
	path := "/evaluators/" + ev["id"].(string)
	patches := []struct {
		body, param, code string
	}{
		{`{"kind":"json_schema"}`, "kind", CodeInvalidValue},
		{`{"kind":"regex","name":"same kind"}`, "kind", CodeInvalidValue},
		{`{"name":""}`, "name", CodeInvalidValue},
		{`{"name":null}`, "name", CodeInvalidValue},
		{`{"config":{"schema":{}}}`, "config.schema", CodeUnknownParameter},
		{`{"config":null}`, "config", CodeInvalidValue},
		{`{"config":{"pattern":"("}}`, "config.pattern", CodeInvalidValue},
		{`{"id":"evr_other"}`, "id", CodeUnknownParameter},
	}
	for _, tt := range patches {
		status, m := h.call(http.MethodPatch, path, tt.body)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, tt.code)
	}
	status, m := h.call(http.MethodPatch, path, fmt.Sprintf(`{"operation_id":%q}`, theirs["id"]))
	wantError(t, status, m, http.StatusForbidden, ErrorTypePermission, "operation_id", "forbidden")
	if _, got := h.call(http.MethodGet, path, ""); got["name"] != "n" || got["kind"] != "regex" {
		t.Fatalf("a refused PATCH changed the evaluator: %v", got)
	}
}
