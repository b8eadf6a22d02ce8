package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAPIOperationLifecycle(t *testing.T) {
	h := newAPIHarness(t)
	ev := h.create("", "/evaluators", `{"name":"has yes","kind":"regex","config":{"pattern":"yes"}}`)
	body := fmt.Sprintf(`{"key":"support_triage","name":"Support triage","description":"routes tickets","ship_gates":[{"evaluator_id":%q,"min_score":0.8}]}`, ev["id"])
	op := h.create("", "/operations", body)
	assertKeys(t, op, "id", "object", "org_id", "key", "name", "description", "ship_gates", "created_at")
	id := op["id"].(string)
	if !strings.HasPrefix(id, "op_") || op["object"] != "operation" || op["org_id"] != h.org.ID || op["key"] != "support_triage" ||
		op["name"] != "Support triage" || op["description"] != "routes tickets" {
		t.Fatalf("created %v", op)
	}
	assertTime(t, op["created_at"])
	gates := op["ship_gates"].([]any)
	gate := gates[0].(map[string]any)
	assertKeys(t, gate, "evaluator_id", "min_score")
	if len(gates) != 1 || gate["evaluator_id"] != ev["id"] || gate["min_score"] != 0.8 {
		t.Fatalf("gates = %v", gates)
	}

	status, got := h.call(http.MethodGet, "/operations/"+id, "")
	if status != http.StatusOK || got["id"] != id || got["key"] != "support_triage" {
		t.Fatalf("GET = %d %v", status, got)
	}

	status, got = h.call(http.MethodPatch, "/operations/"+id, `{"name":"Triage","description":null,"ship_gates":[]}`)
	if status != http.StatusOK || got["name"] != "Triage" || got["description"] != nil || len(got["ship_gates"].([]any)) != 0 || got["key"] != "support_triage" {
		t.Fatalf("PATCH = %d %v", status, got)
	}
	status, got = h.call(http.MethodPatch, "/operations/"+id, `{"description":"again"}`)
	if status != http.StatusOK || got["description"] != "again" || got["name"] != "Triage" {
		t.Fatalf("PATCH description = %d %v", status, got)
	}
	status, got = h.call(http.MethodPatch, "/operations/"+id, `{}`)
	if status != http.StatusOK || got["description"] != "again" {
		t.Fatalf("empty PATCH = %d %v", status, got)
	}

	minimal := h.create("", "/operations", `{"key":"a","name":"A"}`)
	if minimal["description"] != nil || len(minimal["ship_gates"].([]any)) != 0 {
		t.Fatalf("minimal = %v", minimal)
	}
	withNull := h.create("", "/operations", `{"key":"b","name":"B","description":null}`)
	if withNull["description"] != nil {
		t.Fatalf("null description = %v", withNull)
	}
	// The same key in another org is fine.
	h.create("other", "/operations", `{"key":"support_triage","name":"Theirs"}`)
}

func TestAPIOperationLimits(t *testing.T) {
	h := newAPIHarness(t)
	ev := h.create("", "/evaluators", `{"name":"e","kind":"regex","config":{"pattern":"x"}}`)
	theirs := h.create("other", "/evaluators", `{"name":"e","kind":"regex","config":{"pattern":"x"}}`)
	h.create("", "/operations", `{"key":"taken","name":"T"}`)
	gate := func(g string) string { return `{"key":"k","name":"n","ship_gates":[` + g + `]}` }
	tests := []struct {
		body, param, code string
	}{
		{`{"name":"n"}`, "key", CodeMissingParameter},
		{`{"key":null,"name":"n"}`, "key", CodeMissingParameter},
		{`{"key":"","name":"n"}`, "key", CodeInvalidValue},
		{`{"key":"Bad-Key","name":"n"}`, "key", CodeInvalidValue},
		{`{"key":"` + strings.Repeat("k", 129) + `","name":"n"}`, "key", CodeInvalidValue},
		{`{"key":7,"name":"n"}`, "key", CodeInvalidValue},
		{`{"key":"taken","name":"n"}`, "key", CodeAlreadyExists},
		{`{"key":"k"}`, "name", CodeMissingParameter},
		{`{"key":"k","name":""}`, "name", CodeInvalidValue},
		{`{"key":"k","name":"` + strings.Repeat("n", 257) + `"}`, "name", CodeInvalidValue},
		{`{"key":"k","name":["n"]}`, "name", CodeInvalidValue},
		{`{"key":"k","name":"n","description":"` + strings.Repeat("d", 2001) + `"}`, "description", CodeInvalidValue},
		{`{"key":"k","name":"n","description":5}`, "description", CodeInvalidValue},
		{`{"key":"k","name":"n","ship_gates":{}}`, "ship_gates", CodeInvalidValue},
		{`{"key":"k","name":"n","ship_gates":null}`, "ship_gates", CodeInvalidValue},
		{gate(`"evr_x"`), "ship_gates[0]", CodeInvalidValue},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":0.5,"weight":1}`, ev["id"])), "ship_gates[0].weight", CodeUnknownParameter},
		{gate(`{"min_score":0.5}`), "ship_gates[0].evaluator_id", CodeMissingParameter},
		{gate(fmt.Sprintf(`{"evaluator_id":%q}`, ev["id"])), "ship_gates[0].min_score", CodeMissingParameter},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":-0.1}`, ev["id"])), "ship_gates[0].min_score", CodeInvalidValue},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":1.1}`, ev["id"])), "ship_gates[0].min_score", CodeInvalidValue},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":"0.5"}`, ev["id"])), "ship_gates[0].min_score", CodeInvalidValue},
		{gate(`{"evaluator_id":3,"min_score":0.5}`), "ship_gates[0].evaluator_id", CodeInvalidValue},
		{gate(`{"evaluator_id":"evr_missing","min_score":0.5}`), "ship_gates[0].evaluator_id", CodeInvalidValue},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":0.5}`, theirs["id"])), "ship_gates[0].evaluator_id", CodeInvalidValue},
		{gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":0.5},{"evaluator_id":%q,"min_score":0.6}`, ev["id"], ev["id"])), "ship_gates[1].evaluator_id", CodeInvalidValue},
	}
	for _, tt := range tests {
		status, m := h.call(http.MethodPost, "/operations", tt.body)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, tt.code)
	}
	// The edges of each limit are accepted.
	h.create("", "/operations", `{"key":"`+strings.Repeat("k", 128)+`","name":"`+strings.Repeat("é", 256)+`","description":"`+strings.Repeat("d", 2000)+`"}`)
	h.create("", "/operations", gate(fmt.Sprintf(`{"evaluator_id":%q,"min_score":0},{"evaluator_id":"%s","min_score":1}`, ev["id"], h.create("", "/evaluators", `{"name":"f","kind":"regex","config":{"pattern":"x"}}`)["id"])))

	op := h.create("", "/operations", `{"key":"patched","name":"P"}`)
	path := "/operations/" + op["id"].(string)
	patches := []struct {
		body, param, code string
	}{
		{`{"key":"other"}`, "key", CodeUnknownParameter},
		{`{"name":null}`, "name", CodeInvalidValue},
		{`{"name":""}`, "name", CodeInvalidValue},
		{`{"name":"` + strings.Repeat("n", 257) + `"}`, "name", CodeInvalidValue},
		{`{"description":"` + strings.Repeat("d", 2001) + `"}`, "description", CodeInvalidValue},
		{`{"ship_gates":null}`, "ship_gates", CodeInvalidValue},
		{`{"ship_gates":[{"evaluator_id":"evr_missing","min_score":0.5}]}`, "ship_gates[0].evaluator_id", CodeInvalidValue},
	}
	for _, tt := range patches {
		status, m := h.call(http.MethodPatch, path, tt.body)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, tt.code)
	}
	if _, got := h.call(http.MethodGet, path, ""); got["name"] != "P" {
		t.Fatalf("a refused PATCH changed the operation: %v", got)
	}
}
