package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAPIDatasetLifecycle(t *testing.T) {
	h := newAPIHarness(t)
	op := h.create("", "/operations", `{"key":"support","name":"S"}`)
	ds := h.create("", "/datasets", `{"operation_id":"support","name":"Tickets"}`)
	assertKeys(t, ds, "id", "object", "org_id", "operation_id", "name", "version", "status", "promoted_at", "created_at")
	id := ds["id"].(string)
	if !strings.HasPrefix(id, "ds_") || ds["object"] != "dataset" || ds["org_id"] != h.org.ID || ds["operation_id"] != op["id"] ||
		ds["name"] != "Tickets" || ds["version"] != 1.0 || ds["status"] != "draft" || ds["promoted_at"] != nil {
		t.Fatalf("created %v", ds)
	}
	assertTime(t, ds["created_at"])
	byID := h.create("", "/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"By id"}`, op["id"]))
	if byID["operation_id"] != op["id"] {
		t.Fatalf("by id = %v", byID)
	}

	c := testCall("", h.org.ID, nil, time.Now())
	c.Delivery = json.RawMessage(`{"fingerprints":{"prompt":"fp_p_1"}}`)
	h.s.RecordCall(c)
	added := h.create("", "/datasets/"+id+"/items", fmt.Sprintf(`{"items":[
		{"input":[{"role":"user","content":"hi"}],"expected_output":{"answer":1},"weight":2.5},
		{"source_call_id":%q,"expected_output":"hello"},
		{}
	]}`, c.ID))
	assertKeys(t, added, "object", "data", "has_more", "next_cursor")
	items := added["data"].([]any)
	if added["object"] != "list" || added["has_more"] != false || added["next_cursor"] != nil || len(items) != 3 {
		t.Fatalf("added %v", added)
	}
	first := items[0].(map[string]any)
	assertKeys(t, first, "id", "object", "dataset_id", "source_call_id", "input", "expected_output", "weight", "created_at", "dataset_version")
	if !strings.HasPrefix(first["id"].(string), "dsi_") || first["object"] != "dataset_item" || first["dataset_id"] != id ||
		first["source_call_id"] != nil || first["weight"] != 2.5 || first["dataset_version"] != 2.0 ||
		first["expected_output"].(map[string]any)["answer"] != 1.0 {
		t.Fatalf("first item %v", first)
	}
	second := items[1].(map[string]any)
	if second["source_call_id"] != c.ID || second["weight"] != 1.0 || second["prompt_fingerprint"] != "fp_p_1" {
		t.Fatalf("second item %v", second)
	}
	third := items[2].(map[string]any)
	assertKeys(t, third, "id", "object", "dataset_id", "source_call_id", "weight", "created_at", "dataset_version")

	_, got := h.call(http.MethodGet, "/datasets/"+id, "")
	if got["version"] != 2.0 || got["status"] != "draft" {
		t.Fatalf("after add %v", got)
	}
	h.create("", "/datasets/"+id+"/items", `{"items":[{"input":"more"}]}`)
	_, got = h.call(http.MethodGet, "/datasets/"+id, "")
	if got["version"] != 3.0 {
		t.Fatalf("second add: version %v", got["version"])
	}
	status, list := h.call(http.MethodGet, "/datasets/"+id+"/items", "")
	data := list["data"].([]any)
	if status != http.StatusOK || len(data) != 4 || data[0].(map[string]any)["input"] != "more" || data[3].(map[string]any)["id"] != first["id"] {
		t.Fatalf("items list %d %v", status, list)
	}
}

func TestAPIDatasetLimits(t *testing.T) {
	h := newAPIHarness(t)
	h.create("", "/operations", `{"key":"support","name":"S"}`)
	theirOp := h.create("other", "/operations", `{"key":"theirs","name":"T"}`)
	creates := []struct {
		body   string
		status int
		param  string
	}{
		{`{"name":"n"}`, 400, "operation_id"},
		{`{"operation_id":"support"}`, 400, "name"},
		{`{"operation_id":"support","name":""}`, 400, "name"},
		{`{"operation_id":"support","name":"` + strings.Repeat("n", 257) + `"}`, 400, "name"},
		{`{"operation_id":5,"name":"n"}`, 400, "operation_id"},
		{`{"operation_id":"op_missing","name":"n"}`, 404, "operation_id"},
		{`{"operation_id":"theirs","name":"n"}`, 404, "operation_id"},
		{fmt.Sprintf(`{"operation_id":%q,"name":"n"}`, theirOp["id"]), 403, "operation_id"},
		{`{"operation_id":"support","name":"n","version":2}`, 400, "version"},
	}
	for _, tt := range creates {
		status, m := h.call(http.MethodPost, "/datasets", tt.body)
		typ := map[int]string{400: ErrorTypeInvalidRequest, 404: ErrorTypeNotFound, 403: ErrorTypePermission}[tt.status]
		wantError(t, status, m, tt.status, typ, tt.param, "")
	}

	ds := h.create("", "/datasets", `{"operation_id":"support","name":"n"}`)
	path := "/datasets/" + ds["id"].(string) + "/items"
	theirCall := testCall("", h.other.ID, nil, time.Now())
	h.s.RecordCall(theirCall)
	many := func(n int) string {
		return `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"input":"x"},`, n), ",") + `]}`
	}
	items := []struct {
		body   string
		status int
		param  string
	}{
		{`{}`, 400, "items"},
		{`{"items":null}`, 400, "items"},
		{`{"items":[]}`, 400, "items"},
		{many(1001), 400, "items"},
		{`{"items":{"input":"x"}}`, 400, "items"},
		{`{"items":["x"]}`, 400, "items[0]"},
		{`{"items":[{"input":"x"},{"input":"y","output":"z"}]}`, 400, "items[1].output"},
		{`{"items":[{"weight":101}]}`, 400, "items[0].weight"},
		{`{"items":[{"weight":-1}]}`, 400, "items[0].weight"},
		{`{"items":[{"weight":"1"}]}`, 400, "items[0].weight"},
		{`{"items":[{"source_call_id":7}]}`, 400, "items[0].source_call_id"},
		{`{"items":[{"source_call_id":""}]}`, 400, "items[0].source_call_id"},
		{`{"items":[{"input":"a"},{"source_call_id":"call_missing"}]}`, 404, "items[1].source_call_id"},
		{fmt.Sprintf(`{"items":[{"source_call_id":%q}]}`, theirCall.ID), 403, "items[0].source_call_id"},
	}
	for _, tt := range items {
		status, m := h.call(http.MethodPost, path, tt.body)
		typ := map[int]string{400: ErrorTypeInvalidRequest, 404: ErrorTypeNotFound, 403: ErrorTypePermission}[tt.status]
		wantError(t, status, m, tt.status, typ, tt.param, "")
	}
	if _, got := h.call(http.MethodGet, "/datasets/"+ds["id"].(string), ""); got["version"] != 1.0 {
		t.Fatalf("refused adds changed the version: %v", got["version"])
	}
	h.create("", path, many(1000))
	h.create("", path, `{"items":[{"weight":0},{"weight":100}]}`)
}

func TestAPIGoldenDatasetIsFrozen(t *testing.T) {
	h := newAPIHarness(t)
	h.create("", "/operations", `{"key":"support","name":"S"}`)
	ds := h.create("", "/datasets", `{"operation_id":"support","name":"n"}`)
	id := ds["id"].(string)
	status, p := h.call(http.MethodPost, "/datasets/"+id+"/promote", "")
	if status != http.StatusOK {
		t.Fatalf("promote without gates: %d %v", status, p)
	}
	assertKeys(t, p, "dataset")
	promoted := p["dataset"].(map[string]any)
	if promoted["status"] != "golden" {
		t.Fatalf("promoted %v", promoted)
	}
	promotedAt := assertTime(t, promoted["promoted_at"])
	status, m := h.call(http.MethodPost, "/datasets/"+id+"/items", `{"items":[{"input":"x"}]}`)
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "", CodeDatasetFrozen)
	status, p = h.call(http.MethodPost, "/datasets/"+id+"/promote", `{}`)
	if status != http.StatusOK || !assertTime(t, p["dataset"].(map[string]any)["promoted_at"]).Equal(promotedAt) {
		t.Fatalf("promoting again: %d %v", status, p)
	}
	status, m = h.call(http.MethodPost, "/datasets/"+id+"/promote", `{"force":true}`)
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "force", CodeUnknownParameter)
}

func TestAPIPromotionGates(t *testing.T) {
	h := newAPIHarness(t)
	yes := h.create("", "/evaluators", `{"name":"has yes","kind":"regex","config":{"pattern":"yes"}}`)
	isJSON := h.create("", "/evaluators", `{"name":"is json","kind":"json_schema","config":{"schema":{"type":"object"}}}`)
	h.create("", "/operations", fmt.Sprintf(`{"key":"support","name":"S","ship_gates":[{"evaluator_id":%q,"min_score":0.8},{"evaluator_id":%q,"min_score":0.5}]}`, yes["id"], isJSON["id"]))
	ds := h.create("", "/datasets", `{"operation_id":"support","name":"n"}`)
	id := ds["id"].(string)
	h.create("", "/datasets/"+id+"/items", `{"items":[{"input":"a","expected_output":"yes"},{"input":"b","expected_output":"no"}]}`)

	// No evaluation yet: every gate fails without a score.
	status, m := h.call(http.MethodPost, "/datasets/"+id+"/promote", "")
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeShipGatesUnmet, "", CodeShipGatesUnmet)
	assertKeys(t, m, "error", "failed_gates")
	failed := m["failed_gates"].([]any)
	if len(failed) != 2 {
		t.Fatalf("failed_gates = %v", failed)
	}
	g0 := failed[0].(map[string]any)
	assertKeys(t, g0, "evaluator_id", "min_score", "actual_score")
	if g0["evaluator_id"] != yes["id"] || g0["min_score"] != 0.8 || g0["actual_score"] != nil {
		t.Fatalf("failed gate = %v", g0)
	}

	// An evaluation with only the regex evaluator scores 0.5.
	eval := h.create("", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q]}`, id, yes["id"]))
	waitStatus(t, h.s, eval["id"].(string), EvaluationDone)
	status, m = h.call(http.MethodPost, "/datasets/"+id+"/promote", "")
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeShipGatesUnmet, "", CodeShipGatesUnmet)
	failed = m["failed_gates"].([]any)
	g0, g1 := failed[0].(map[string]any), failed[1].(map[string]any)
	if g0["actual_score"] != 0.5 || g1["evaluator_id"] != isJSON["id"] || g1["actual_score"] != nil {
		t.Fatalf("failed gates = %v", failed)
	}
	if _, got := h.call(http.MethodGet, "/datasets/"+id, ""); got["status"] != "draft" {
		t.Fatal("a refused promotion changed the dataset")
	}

	// The fix: a heavy item that passes, and an evaluation of the new
	// version with both evaluators (json_schema scores the item objects).
	h.create("", "/datasets/"+id+"/items", `{"items":[{"input":"c","expected_output":"{\"yes\":1}","weight":10}]}`)
	eval2 := h.create("", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q,%q]}`, id, yes["id"], isJSON["id"]))
	done := waitStatus(t, h.s, eval2["id"].(string), EvaluationDone)
	if done.DatasetVersion != 3 {
		t.Fatalf("evaluated version %d", done.DatasetVersion)
	}
	status, m = h.call(http.MethodPost, "/datasets/"+id+"/promote", "")
	if status != http.StatusOK {
		t.Fatalf("promote after the fix: %d %v (summary %v)", status, m, done.SummaryScores)
	}
	assertKeys(t, m, "dataset", "evaluation_id")
	if m["evaluation_id"] != eval2["id"] || m["dataset"].(map[string]any)["status"] != "golden" {
		t.Fatalf("promotion = %v", m)
	}
	assertTime(t, m["dataset"].(map[string]any)["promoted_at"])
}

func TestAPITrainingRequest(t *testing.T) {
	h := newAPIHarness(t)
	h.create("", "/operations", `{"key":"support","name":"S"}`)
	ds := h.create("", "/datasets", `{"operation_id":"support","name":"n"}`)
	path := "/datasets/" + ds["id"].(string) + "/training"
	status, m := h.call(http.MethodPost, path, `{}`)
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "", CodeDatasetNotGolden)
	if status, _ := h.call(http.MethodPost, "/datasets/"+ds["id"].(string)+"/promote", ""); status != http.StatusOK {
		t.Fatal("promote")
	}
	bad := []struct{ body, param, code string }{
		{``, "", CodeInvalidBody},
		{`{"notes":"` + strings.Repeat("n", 8001) + `"}`, "notes", CodeInvalidValue},
		{`{"notes":1}`, "notes", CodeInvalidValue},
		{`{"priority":"high"}`, "priority", CodeUnknownParameter},
	}
	for _, tt := range bad {
		status, m := h.call(http.MethodPost, path, tt.body)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, tt.code)
	}
	tr := h.create("", path, `{"notes":"`+strings.Repeat("n", 8000)+`"}`)
	assertKeys(t, tr, "id", "object", "org_id", "dataset_id", "dataset_version", "requested_by_user_id", "status", "notes", "created_at", "updated_at")
	if !strings.HasPrefix(tr["id"].(string), "tr_") || tr["object"] != "training_request" || tr["org_id"] != h.org.ID ||
		tr["dataset_id"] != ds["id"] || tr["dataset_version"] != 1.0 || tr["requested_by_user_id"] != "key_test" || tr["status"] != "requested" {
		t.Fatalf("created %v", tr)
	}
	assertTime(t, tr["created_at"])
	assertTime(t, tr["updated_at"])
	withoutNotes := h.create("", path, `{"notes":null}`)
	if withoutNotes["notes"] != nil {
		t.Fatalf("notes = %v", withoutNotes["notes"])
	}
	pending, _ := h.s.PendingMail()
	if len(pending) != 2 || pending[0].To[0] != "sales@example.com" || !strings.Contains(pending[0].Body, tr["id"].(string)) {
		t.Fatalf("outbox = %+v", pending)
	}

	var logged []string
	quiet := &API{Store: h.s, Logger: func(msg string, _ error) { logged = append(logged, msg) }}
	rec := httptest.NewRecorder()
	quiet.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1"+path, strings.NewReader(`{}`)), h.org.ID, h.org.Plan, "key_test", path)
	if pending, _ := h.s.PendingMail(); rec.Code != http.StatusCreated || len(pending) != 2 || len(logged) != 1 {
		t.Fatalf("without a sales address: %d, %d emails, logged %v", rec.Code, len(pending), logged)
	}
}
