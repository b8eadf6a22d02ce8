package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// apiHarness serves the API over real HTTP (httptest) from a real bbolt
// file, with a worker running evaluations through fakeModels. Requests act
// for the org "acme" with the user "key_test", or for "globex" when they
// carry the header X-Test-Org: other; paths not served by the API get 404
// with the body "not ours".
type apiHarness struct {
	t      *testing.T
	s      *BoltStore
	org    Org
	other  Org
	api    *API
	srv    *httptest.Server
	models *fakeModels
	worker *Worker
	logs   []string
}

func newAPIHarness(t *testing.T) *apiHarness {
	t.Helper()
	s, _ := openTestStore(t, BoltOptions{})
	h := &apiHarness{t: t, s: s, models: &fakeModels{}}
	var err error
	if h.org, err = s.EnsureOrg("acme"); err != nil {
		t.Fatal(err)
	}
	if h.other, err = s.EnsureOrg("globex"); err != nil {
		t.Fatal(err)
	}
	h.api = &API{Store: s, Models: h.models, SalesEmail: "sales@example.com"}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org := h.org
		if r.Header.Get("X-Test-Org") == "other" {
			org = h.other
		}
		path := strings.TrimPrefix(r.URL.Path, "/v1")
		if !h.api.ServeHTTP(w, r, org.ID, org.Plan, "key_test", path) {
			http.Error(w, "not ours", http.StatusNotFound)
		}
	}))
	t.Cleanup(h.srv.Close)
	h.worker = startWorker(t, s, h.models, WorkerOptions{})
	return h
}

// do sends a request as org ("" for acme, "other" for globex) and returns
// the status and the raw body.
func (h *apiHarness) do(as, method, path, body string) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+"/v1"+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if as != "" {
		req.Header.Set("X-Test-Org", as)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// call sends a request as acme and decodes the JSON object it answers.
func (h *apiHarness) call(method, path, body string) (int, map[string]any) {
	h.t.Helper()
	return h.callAs("", method, path, body)
}

// callAs is call as the given org.
func (h *apiHarness) callAs(as, method, path, body string) (int, map[string]any) {
	h.t.Helper()
	status, data := h.do(as, method, path, body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		h.t.Fatalf("%s %s: %d %q is not a JSON object", method, path, status, data)
	}
	return status, m
}

// create POSTs body as the org and expects 201.
func (h *apiHarness) create(as, path, body string) map[string]any {
	h.t.Helper()
	status, m := h.callAs(as, http.MethodPost, path, body)
	if status != http.StatusCreated {
		h.t.Fatalf("POST %s %s: %d %v", path, body, status, m)
	}
	return m
}

// wantError checks an error response: status, type, param ("" for null)
// and, when code is set, the code.
func wantError(t *testing.T, status int, m map[string]any, wantStatus int, typ, param, code string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if status != wantStatus || !ok {
		t.Fatalf("got %d %v, want %d %s param %q", status, m, wantStatus, typ, param)
	}
	assertKeys(t, e, "message", "type", "code", "param")
	var gotParam string
	if p, ok := e["param"].(string); ok {
		gotParam = p
	} else if e["param"] != nil {
		t.Fatalf("param is %v", e["param"])
	}
	if e["type"] != typ || gotParam != param || (code != "" && e["code"] != code) || e["message"] == "" {
		t.Fatalf("got %d %v, want %d type %s param %q code %q", status, e, wantStatus, typ, param, code)
	}
}

// assertKeys checks that m has exactly these keys.
func assertKeys(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
}

// assertTime checks that v is an ISO 8601 UTC timestamp.
func assertTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("timestamp is %v", v)
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return ts
}

// setup creates, as acme, an evaluator, an operation gated by it, a
// dataset of that operation with one item, and returns their ids.
func (h *apiHarness) setup(as string) (evaluatorID, operationID, datasetID string) {
	h.t.Helper()
	ev := h.create(as, "/evaluators", `{"name":"has yes","kind":"regex","config":{"pattern":"yes"}}`)
	op := h.create(as, "/operations", fmt.Sprintf(`{"key":"support","name":"Support","ship_gates":[{"evaluator_id":%q,"min_score":0.5}]}`, ev["id"]))
	ds := h.create(as, "/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"cases"}`, op["id"]))
	h.create(as, "/datasets/"+ds["id"].(string)+"/items", `{"items":[{"input":"q","expected_output":"yes"}]}`)
	return ev["id"].(string), op["id"].(string), ds["id"].(string)
}

func TestAPIRouting(t *testing.T) {
	h := newAPIHarness(t)
	for _, path := range []string{"/calls", "/calls/call_1", "/models", "/chat/completions", "/datasets/ds_1/other", "/operations/op_1/x", "/", "/operations//x", "/feedback/fb_1"} {
		status, body := h.do("", http.MethodGet, path, "")
		if status != http.StatusNotFound || string(body) != "not ours\n" {
			t.Errorf("GET %s: %d %q, want it passed on", path, status, body)
		}
	}
	for _, path := range []string{"/operations", "/operations/", "/datasets", "/evaluators", "/evaluations"} {
		if status, _ := h.call(http.MethodGet, path, ""); status != http.StatusOK {
			t.Errorf("GET %s: %d", path, status)
		}
	}
}

func TestAPIMethodNotAllowed(t *testing.T) {
	h := newAPIHarness(t)
	tests := []struct{ method, path, allow string }{
		{http.MethodGet, "/feedback", "POST"},
		{http.MethodDelete, "/operations", "GET, POST"},
		{http.MethodPost, "/operations/op_1", "GET, PATCH"},
		{http.MethodPut, "/datasets/ds_1", "GET"},
		{http.MethodDelete, "/datasets/ds_1/items", "GET, POST"},
		{http.MethodGet, "/datasets/ds_1/promote", "POST"},
		{http.MethodGet, "/datasets/ds_1/training", "POST"},
		{http.MethodPatch, "/evaluators", "GET, POST"},
		{http.MethodDelete, "/evaluators/evr_1", "GET, PATCH"},
		{http.MethodPatch, "/evaluations/eval_1", "GET"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, h.srv.URL+"/v1"+tt.path, nil)
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		wantError(t, resp.StatusCode, m, http.StatusMethodNotAllowed, ErrorTypeInvalidRequest, "", "method_not_allowed")
		if got := resp.Header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
}

func TestAPIBodiesMustBeJSONObjects(t *testing.T) {
	h := newAPIHarness(t)
	evID, opID, dsID := h.setup("")
	posts := []string{"/feedback", "/operations", "/datasets", "/datasets/" + dsID + "/items", "/datasets/" + dsID + "/training", "/evaluators", "/evaluations"}
	patches := []string{"/operations/" + opID, "/evaluators/" + evID}
	for _, body := range []string{``, `[]`, `"x"`, `42`, `null`, `{"a":`, `not json`} {
		for _, p := range posts {
			status, m := h.call(http.MethodPost, p, body)
			wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "", CodeInvalidBody)
		}
		for _, p := range patches {
			status, m := h.call(http.MethodPatch, p, body)
			wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "", CodeInvalidBody)
		}
	}
	for _, p := range append(posts, patches...) {
		method := http.MethodPost
		if slices.Contains(patches, p) {
			method = http.MethodPatch
		}
		status, m := h.call(method, p, `{"surprise":1,"zzz":2}`)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "surprise", CodeUnknownParameter)
		if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `"zzz"`) {
			t.Errorf("%s: message %q does not list every unknown field", p, msg)
		}
	}
}

func TestAPIForeignAndUnknownIDs(t *testing.T) {
	h := newAPIHarness(t)
	evID, opID, dsID := h.setup("other")
	h.create("other", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q]}`, dsID, evID))
	_, list := h.callAs("other", http.MethodGet, "/evaluations", "")
	evalID := list["data"].([]any)[0].(map[string]any)["id"].(string)
	tests := []struct {
		method, path, body string
	}{
		{http.MethodGet, "/operations/%s", ""},
		{http.MethodPatch, "/operations/%s", `{"name":"x"}`},
		{http.MethodGet, "/datasets/%s", ""},
		{http.MethodGet, "/datasets/%s/items", ""},
		{http.MethodPost, "/datasets/%s/items", `{"items":[{"input":"x"}]}`},
		{http.MethodPost, "/datasets/%s/promote", ""},
		{http.MethodPost, "/datasets/%s/training", `{}`},
		{http.MethodGet, "/evaluators/%s", ""},
		{http.MethodPatch, "/evaluators/%s", `{"name":"x"}`},
		{http.MethodGet, "/evaluations/%s", ""},
	}
	ids := map[string]string{"operations": opID, "datasets": dsID, "evaluators": evID, "evaluations": evalID}
	for _, tt := range tests {
		kind := strings.Split(tt.path, "/")[1]
		status, m := h.call(tt.method, fmt.Sprintf(tt.path, ids[kind]), tt.body)
		wantError(t, status, m, http.StatusForbidden, ErrorTypePermission, "", "forbidden")
		status, m = h.call(tt.method, fmt.Sprintf(tt.path, kind[:2]+"_missing"), tt.body)
		wantError(t, status, m, http.StatusNotFound, ErrorTypeNotFound, "", "not_found")
	}
	// The owner still reaches every one of them.
	for kind, id := range ids {
		if status, m := h.callAs("other", http.MethodGet, "/"+kind+"/"+id, ""); status != http.StatusOK {
			t.Errorf("owner GET %s: %d %v", kind, status, m)
		}
	}
}

func TestAPIListsPageNewestFirst(t *testing.T) {
	h := newAPIHarness(t)
	evID, opID, dsID := h.setup("")
	for i := range 4 {
		h.create("", "/evaluators", fmt.Sprintf(`{"name":"e%d","kind":"regex","config":{"pattern":"x"}}`, i))
		h.create("", "/operations", fmt.Sprintf(`{"key":"op_%d","name":"o"}`, i))
		h.create("", "/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"d%d"}`, opID, i))
		h.create("", "/datasets/"+dsID+"/items", `{"items":[{"input":"q","expected_output":"yes"}]}`)
		h.create("", "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q]}`, dsID, evID))
	}
	for path, total := range map[string]int{"/evaluators": 5, "/operations": 5, "/datasets": 5, "/datasets/" + dsID + "/items": 5, "/evaluations": 4} {
		var ids []string
		var times []time.Time
		cursor := ""
		for pages := 0; ; pages++ {
			q := "?limit=2"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			status, m := h.call(http.MethodGet, path+q, "")
			if status != http.StatusOK {
				t.Fatalf("GET %s%s: %d %v", path, q, status, m)
			}
			assertKeys(t, m, "object", "data", "has_more", "next_cursor")
			if m["object"] != "list" {
				t.Fatalf("object = %v", m["object"])
			}
			for _, d := range m["data"].([]any) {
				obj := d.(map[string]any)
				ids = append(ids, obj["id"].(string))
				times = append(times, assertTime(t, obj["created_at"]))
				if _, has := obj["results"]; has {
					t.Fatalf("%s: list items carry results", path)
				}
			}
			if m["has_more"] == false {
				if m["next_cursor"] != nil {
					t.Fatalf("%s: last page has a cursor", path)
				}
				break
			}
			cursor = m["next_cursor"].(string)
		}
		if len(ids) != total {
			t.Fatalf("%s: %d items, want %d", path, len(ids), total)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] >= ids[i-1] || times[i].After(times[i-1]) {
				t.Fatalf("%s: not newest first: %v", path, ids)
			}
		}
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "limit=-1", "limit="} {
		status, m := h.call(http.MethodGet, "/operations?"+q, "")
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "limit", "")
	}
	status, m := h.call(http.MethodGet, "/datasets?cursor=%25%25", "")
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "cursor", "")
	status, m = h.call(http.MethodGet, "/evaluators?limit=200", "")
	if status != http.StatusOK || len(m["data"].([]any)) != 5 {
		t.Fatalf("limit=200: %d", status)
	}
	_, m = h.call(http.MethodGet, "/evaluators", "")
	if len(m["data"].([]any)) != 5 || m["has_more"] != false {
		t.Fatalf("default page: %v", m)
	}
}

func TestAPIDefaultPageIs50(t *testing.T) {
	h := newAPIHarness(t)
	for i := range 51 {
		h.create("", "/evaluators", fmt.Sprintf(`{"name":"e%d","kind":"regex","config":{"pattern":"x"}}`, i))
	}
	_, m := h.call(http.MethodGet, "/evaluators", "")
	if len(m["data"].([]any)) != 50 || m["has_more"] != true {
		t.Fatalf("default page has %d items", len(m["data"].([]any)))
	}
}

func TestAPIWithoutStore(t *testing.T) {
	api := &API{}
	rec := httptest.NewRecorder()
	if !api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/operations", nil), "org", PlanFree, "key", "/operations") {
		t.Fatal("a reliability path was passed on")
	}
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"type":"api_error"`) {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
}

func TestAPIUsesItsClock(t *testing.T) {
	h := newAPIHarness(t)
	at := time.Date(2025, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	api := &API{Store: h.s, Now: func() time.Time { return at }}
	rec := httptest.NewRecorder()
	body := strings.NewReader(`{"key":"clocked","name":"C"}`)
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/operations", body), h.org.ID, PlanFree, "key_test", "/operations")
	var op map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &op); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if op["created_at"] != "2025-05-06T05:08:09Z" {
		t.Fatalf("created_at = %v, want the API's clock in UTC", op["created_at"])
	}
}
