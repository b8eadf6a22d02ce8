package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAPIEvaluationLifecycle(t *testing.T) {
	h := newAPIHarness(t)
	evID, _, dsID := h.setup("")
	judge := h.create("", "/evaluators", `{"name":"judge","kind":"llm_judge","config":{"model":"judge/a","prompt":"{{input}} -> {{output}}"}}`)
	h.create("", "/datasets/"+dsID+"/items", `{"items":[{"input":"GOOD question","expected_output":"no","weight":3}]}`)
	e := h.create("", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q,%q],"model_version":"demo/echo"}`, dsID, evID, judge["id"]))
	assertKeys(t, e, "id", "object", "org_id", "dataset_id", "dataset_version", "evaluator_ids", "model_version", "status",
		"summary_scores", "started_at", "completed_at", "error", "created_at", "progress")
	if p, _ := e["progress"].(map[string]any); p["items_done"] != 0.0 || p["items_total"] != 2.0 {
		t.Fatalf("progress at creation = %v, want 0 of 2 items", e["progress"])
	}
	id := e["id"].(string)
	if !strings.HasPrefix(id, "eval_") || e["object"] != "evaluation" || e["org_id"] != h.org.ID || e["dataset_id"] != dsID ||
		e["dataset_version"] != 3.0 || e["model_version"] != "demo/echo" || e["status"] != "pending" ||
		e["summary_scores"] != nil || e["started_at"] != nil || e["completed_at"] != nil || e["error"] != nil {
		t.Fatalf("created %v", e)
	}
	if ids := e["evaluator_ids"].([]any); len(ids) != 2 || ids[0] != evID || ids[1] != judge["id"] {
		t.Fatalf("evaluator_ids = %v", ids)
	}
	waitStatus(t, h.s, id, EvaluationDone)
	status, got := h.call(http.MethodGet, "/evaluations/"+id, "")
	if status != http.StatusOK || got["status"] != "done" {
		t.Fatalf("GET = %d %v", status, got)
	}
	assertTime(t, got["started_at"])
	assertTime(t, got["completed_at"])
	if p, _ := got["progress"].(map[string]any); p["items_done"] != 2.0 || p["items_total"] != 2.0 {
		t.Fatalf("progress when done = %v, want 2 of 2 items", got["progress"])
	}
	// The model echoes the input: "echo: q" has no "yes" (0, weight 1),
	// "echo: GOOD question" neither (0, weight 3); the judge sees the
	// input "q" -> 0.3 and "GOOD question" -> 0.9.
	summary := got["summary_scores"].(map[string]any)
	if summary[evID] != 0.0 || fmt.Sprintf("%.4f", summary[judge["id"].(string)]) != "0.7500" {
		t.Fatalf("summary = %v", summary)
	}
	results := got["results"].([]any)
	if len(results) != 4 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0].(map[string]any)
	assertKeys(t, r, "id", "object", "evaluation_id", "dataset_item_id", "evaluator_id", "score", "details")
	if !strings.HasPrefix(r["id"].(string), "evres_") || r["object"] != "evaluation_result" || r["evaluation_id"] != id {
		t.Fatalf("result %v", r)
	}
	if r["details"].(map[string]any)["output"] != "echo: q" {
		t.Fatalf("details %v", r["details"])
	}
}

func TestAPIEvaluationFailure(t *testing.T) {
	h := newAPIHarness(t)
	evID, _, dsID := h.setup("")
	e := h.create("", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q],"model_version":"fail/x"}`, dsID, evID))
	waitStatus(t, h.s, e["id"].(string), EvaluationFailed)
	_, got := h.call(http.MethodGet, "/evaluations/"+e["id"].(string), "")
	if got["status"] != "failed" || !strings.Contains(got["error"].(string), "model unavailable") || got["summary_scores"] != nil {
		t.Fatalf("failed evaluation = %v", got)
	}
	assertTime(t, got["completed_at"])
	if results, ok := got["results"].([]any); !ok || len(results) != 0 {
		t.Fatalf("results = %v", got["results"])
	}
}

func TestAPIEvaluationLimits(t *testing.T) {
	h := newAPIHarness(t)
	evID, opID, dsID := h.setup("")
	theirEv, _, theirDs := h.setup("other")
	empty := h.create("", "/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"empty"}`, opID))
	tests := []struct {
		body   string
		status int
		param  string
		code   string
	}{
		{fmt.Sprintf(`{"evaluator_ids":[%q]}`, evID), 400, "dataset_id", CodeMissingParameter},
		{`{"dataset_id":"` + dsID + `"}`, 400, "evaluator_ids", CodeMissingParameter},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":[]}`, 400, "evaluator_ids", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":"` + evID + `"}`, 400, "evaluator_ids", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":[7]}`, 400, "evaluator_ids[0]", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":["` + evID + `","evr_missing"]}`, 400, "evaluator_ids[1]", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":["` + theirEv + `"]}`, 400, "evaluator_ids[0]", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":["` + evID + `","` + evID + `"]}`, 400, "evaluator_ids[1]", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":["` + evID + `"],"model_version":""}`, 400, "model_version", CodeInvalidValue},
		{`{"dataset_id":"` + dsID + `","evaluator_ids":["` + evID + `"],"model_version":5}`, 400, "model_version", CodeInvalidValue},
		{`{"dataset_id":9,"evaluator_ids":["` + evID + `"]}`, 400, "dataset_id", CodeInvalidValue},
		{`{"dataset_id":"` + empty["id"].(string) + `","evaluator_ids":["` + evID + `"]}`, 400, "dataset_id", CodeDatasetEmpty},
		{`{"dataset_id":"ds_missing","evaluator_ids":["` + evID + `"]}`, 404, "dataset_id", "not_found"},
		{`{"dataset_id":"` + theirDs + `","evaluator_ids":["` + evID + `"]}`, 403, "dataset_id", "forbidden"},
	}
	for _, tt := range tests {
		status, m := h.call(http.MethodPost, "/evaluations", tt.body)
		typ := map[int]string{400: ErrorTypeInvalidRequest, 404: ErrorTypeNotFound, 403: ErrorTypePermission}[tt.status]
		wantError(t, status, m, tt.status, typ, tt.param, tt.code)
	}
	if _, list := h.call(http.MethodGet, "/evaluations", ""); len(list["data"].([]any)) != 0 {
		t.Fatalf("refused requests stored evaluations: %v", list)
	}
}
