package integration

import (
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/tidwall/gjson"
)

// mailSink is a real SMTP server that keeps what it accepts.
type mailSink struct {
	addr string
	mu   sync.Mutex
	msgs []string
}

func startMailSink(t *testing.T) *mailSink {
	t.Helper()
	sink := &mailSink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{sink: sink}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sink
}

func (s *mailSink) messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs...)
}

type mailSession struct {
	sink *mailSink
	to   []string
}

func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.sink.mu.Lock()
	s.sink.msgs = append(s.sink.msgs, "To: "+strings.Join(s.to, ",")+"\n"+string(b))
	s.sink.mu.Unlock()
	return nil
}
func (s *mailSession) Reset()        { s.to = nil }
func (s *mailSession) Logout() error { return nil }

// eventually polls f until it returns nil or the time is up.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReliabilityStory drives the whole reliability story over HTTP
// against a real Caddy: operation with gates, evaluators of all four kinds,
// tagged calls, a dataset from them, an evaluation, a failing promotion, a
// fix, a passing promotion, a training request and its email, feedback and
// its refund, calls listed by operation key and id, and org isolation.
func TestReliabilityStory(t *testing.T) {
	mail := startMailSink(t)
	g := startGatewayOpts(t, gatewayOpts{smtp: mail.addr})

	// Evaluators of all four kinds.
	regexEv := g.post("/evaluators", `{"name":"echoes","kind":"regex","config":{"pattern":"^Echo: "}}`, http.StatusCreated)
	strictEv := g.post("/evaluators", `{"name":"never","kind":"regex","config":{"pattern":"^NEVER"}}`, http.StatusCreated)
	schemaEv := g.post("/evaluators", `{"name":"is string","kind":"json_schema","config":{"schema":{"type":"string"}}}`, http.StatusCreated)
	judgeEv := g.post("/evaluators", `{"name":"judge","kind":"llm_judge","config":{"model":"demo/demo-chat","prompt":"Score 8 for {{output}}","scale":10}}`, http.StatusCreated)
	embedEv := g.post("/evaluators", `{"name":"close","kind":"embedding_match","config":{"model":"demo/demo-embed","threshold":0.5}}`, http.StatusCreated)
	for _, ev := range []gjson.Result{regexEv, strictEv, schemaEv, judgeEv, embedEv} {
		if ev.Get("object").String() != "evaluator" || !strings.HasPrefix(ev.Get("id").String(), "evr_") {
			t.Fatalf("evaluator: %s", ev.Raw)
		}
	}
	status, body, _ := g.do(http.MethodPost, "/evaluators", demoKey, `{"name":"bad","kind":"regex","config":{"pattern":"("}}`)
	if status != http.StatusBadRequest {
		t.Fatalf("bad regex: %d %s", status, body)
	}
	assertSpecError(t, body, "invalid_request_error", "config.pattern")

	// An operation whose gates the answers cannot all pass yet.
	opBody := fmt.Sprintf(`{"key":"support_reply","name":"Support reply","ship_gates":[{"evaluator_id":%q,"min_score":0.9},{"evaluator_id":%q,"min_score":0.5}]}`,
		regexEv.Get("id").String(), strictEv.Get("id").String())
	op := g.post("/operations", opBody, http.StatusCreated)
	opID := op.Get("id").String()
	if op.Get("key").String() != "support_reply" || op.Get("ship_gates.#").Int() != 2 {
		t.Fatalf("operation: %s", op.Raw)
	}

	// Tagged calls, by key and by id.
	var callIDs []string
	for i, tag := range []string{"support_reply", opID, "support_reply"} {
		r := g.post("/chat/completions", chatBody("demo/demo-chat", fmt.Sprintf("question %d", i), `"metadata":{"operation_id":"`+tag+`"}`), http.StatusOK)
		if !r.Get("delivery.evals.scheduled").Bool() || r.Get("delivery.evals.gates").Int() != 2 {
			t.Fatalf("evals: %s", r.Get("delivery").Raw)
		}
		callIDs = append(callIDs, r.Get("id").String())
	}
	untagged := g.post("/chat/completions", chatBody("demo/demo-chat", "untagged", ""), http.StatusOK)
	if untagged.Get("delivery.evals.scheduled").Bool() {
		t.Fatal("an untagged call scheduled an eval pass")
	}
	for _, q := range []string{"support_reply", opID} {
		list := g.get("/calls?operation_id="+q, http.StatusOK)
		if list.Get("data.#").Int() != 3 || list.Get("data.0.operation_id").String() != opID {
			t.Fatalf("calls by %s: %.500s", q, list.Raw)
		}
	}

	// A dataset from those calls.
	ds := g.post("/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"replies"}`, opID), http.StatusCreated)
	dsID := ds.Get("id").String()
	if ds.Get("status").String() != "draft" || ds.Get("version").Int() != 1 || ds.Get("promoted_at").Type != gjson.Null {
		t.Fatalf("dataset: %s", ds.Raw)
	}
	var items []string
	for i, id := range callIDs {
		items = append(items, fmt.Sprintf(`{"source_call_id":%q,"input":"question %d","expected_output":"Echo: question %d","weight":1}`, id, i, i))
	}
	added := g.post("/datasets/"+dsID+"/items", `{"items":[`+strings.Join(items, ",")+`]}`, http.StatusCreated)
	if added.Get("data.#").Int() != 3 {
		t.Fatalf("items: %s", added.Raw)
	}
	if v := g.get("/datasets/"+dsID, http.StatusOK).Get("version").Int(); v != 2 {
		t.Fatalf("version after items: %d", v)
	}

	// An evaluation with all five evaluators; without a model_version the
	// expected outputs themselves are scored.
	evIDs := fmt.Sprintf(`[%q,%q,%q,%q,%q]`, regexEv.Get("id").String(), strictEv.Get("id").String(), schemaEv.Get("id").String(),
		judgeEv.Get("id").String(), embedEv.Get("id").String())
	evaluation := g.post("/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":%s}`, dsID, evIDs), http.StatusCreated)
	evalID := evaluation.Get("id").String()
	var done gjson.Result
	eventually(t, "evaluation done", func() error {
		done = g.get("/evaluations/"+evalID, http.StatusOK)
		if s := done.Get("status").String(); s != "done" {
			return fmt.Errorf("status %s: %.300s", s, done.Raw)
		}
		return nil
	})
	scores := done.Get("summary_scores")
	if scores.Get(regexEv.Get("id").String()).Float() != 1 || scores.Get(strictEv.Get("id").String()).Float() != 0 ||
		// The outputs are plain text, not JSON: the schema evaluator fails them.
		scores.Get(schemaEv.Get("id").String()).Float() != 0 || math.Abs(scores.Get(judgeEv.Get("id").String()).Float()-0.8) > 1e-9 ||
		scores.Get(embedEv.Get("id").String()).Float() < 0.99 {
		t.Fatalf("summary scores: %s", scores.Raw)
	}
	if done.Get("results.#").Int() != 15 {
		t.Fatalf("results: %d", done.Get("results.#").Int())
	}

	// The failing promotion names the failing gate.
	status, body, _ = g.do(http.MethodPost, "/datasets/"+dsID+"/promote", demoKey, nil)
	if status != http.StatusBadRequest || gjson.GetBytes(body, "error.type").String() != "ship_gates_unmet" {
		t.Fatalf("promotion: %d %s", status, body)
	}
	fg := gjson.GetBytes(body, "failed_gates")
	if fg.Get("#").Int() != 1 || fg.Get("0.evaluator_id").String() != strictEv.Get("id").String() ||
		fg.Get("0.min_score").Float() != 0.5 || fg.Get("0.actual_score").Float() != 0 {
		t.Fatalf("failed_gates: %s", fg.Raw)
	}
	// A training request from a draft dataset is refused.
	status, _, _ = g.do(http.MethodPost, "/datasets/"+dsID+"/training", demoKey, `{"notes":"x"}`)
	if status != http.StatusBadRequest {
		t.Fatalf("training from draft: %d", status)
	}

	// The fix: gate on the judge instead; the promotion passes.
	g.do(http.MethodPatch, "/operations/"+opID, demoKey, fmt.Sprintf(`{"ship_gates":[{"evaluator_id":%q,"min_score":0.9},{"evaluator_id":%q,"min_score":0.7}]}`,
		regexEv.Get("id").String(), judgeEv.Get("id").String()))
	promoted := g.post("/datasets/"+dsID+"/promote", "", http.StatusOK)
	if promoted.Get("dataset.status").String() != "golden" || promoted.Get("dataset.promoted_at").String() == "" ||
		promoted.Get("evaluation_id").String() != evalID {
		t.Fatalf("promotion: %s", promoted.Raw)
	}
	status, _, _ = g.do(http.MethodPost, "/datasets/"+dsID+"/items", demoKey, `{"items":[{"input":"x"}]}`)
	if status != http.StatusBadRequest {
		t.Fatalf("items added to a golden dataset: %d", status)
	}

	// The training request and its email, delivered once.
	tr := g.post("/datasets/"+dsID+"/training", `{"notes":"please fine-tune"}`, http.StatusCreated)
	if tr.Get("status").String() != "requested" || tr.Get("dataset_version").Int() != 2 || tr.Get("object").String() != "training_request" {
		t.Fatalf("training request: %s", tr.Raw)
	}
	eventually(t, "sales email", func() error {
		if n := len(mail.messages()); n != 1 {
			return fmt.Errorf("%d messages", n)
		}
		return nil
	})
	if m := mail.messages()[0]; !strings.Contains(m, "sales@gateway.test") || !strings.Contains(m, tr.Get("id").String()) {
		t.Fatalf("email: %s", m)
	}
	// The operator moves it on through the admin API.
	resp, err := http.Post("http://"+g.admin+"/llm/training_requests/"+tr.Get("id").String(), "application/json", strings.NewReader(`{"status":"reviewing"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status change: %d", resp.StatusCode)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(mail.messages()); n != 1 {
		t.Fatalf("%d emails, want exactly 1", n)
	}

	// Feedback: thumbs_down credits the call back once.
	fb := g.post("/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down","tags":["wrong"]}`, callIDs[0]), http.StatusOK)
	if fb.Get("refund.status").String() != "credited" || fb.Get("refund.amount_usd").Float() <= 0 {
		t.Fatalf("feedback: %s", fb.Raw)
	}
	fb = g.post("/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, callIDs[0]), http.StatusOK)
	if fb.Get("refund.status").String() != "already_refunded" {
		t.Fatalf("second thumbs_down: %s", fb.Raw)
	}

	// Org isolation: every endpoint with an id of another org gives 403.
	for _, p := range []struct{ method, path, body string }{
		{http.MethodGet, "/operations/" + opID, ""},
		{http.MethodPatch, "/operations/" + opID, `{"name":"x"}`},
		{http.MethodGet, "/datasets/" + dsID, ""},
		{http.MethodGet, "/datasets/" + dsID + "/items", ""},
		{http.MethodPost, "/datasets/" + dsID + "/items", `{"items":[{"input":"x"}]}`},
		{http.MethodPost, "/datasets/" + dsID + "/promote", ""},
		{http.MethodPost, "/datasets/" + dsID + "/training", `{}`},
		{http.MethodGet, "/evaluators/" + regexEv.Get("id").String(), ""},
		{http.MethodPatch, "/evaluators/" + regexEv.Get("id").String(), `{"name":"x"}`},
		{http.MethodGet, "/evaluations/" + evalID, ""},
		{http.MethodGet, "/calls/" + callIDs[1], ""},
		{http.MethodPost, "/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_up"}`, callIDs[1])},
		{http.MethodPost, "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q]}`, dsID, regexEv.Get("id").String())},
		{http.MethodPost, "/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"steal"}`, opID)},
	} {
		status, body, _ := g.do(p.method, p.path, otherKey, p.body)
		if status != http.StatusForbidden {
			t.Errorf("%s %s with another org's key: %d %.200s", p.method, p.path, status, body)
		}
	}
	// The other org lists none of these.
	for _, p := range []string{"/operations", "/datasets", "/evaluators", "/evaluations"} {
		status, body, _ := g.do(http.MethodGet, p, otherKey, nil)
		if status != http.StatusOK || gjson.GetBytes(body, "data.#").Int() != 0 {
			t.Errorf("other org's %s: %d %.200s", p, status, body)
		}
	}
}

const payerKey = "mg_live_payer000000000000000000000"

// TestEvalGatedRefundOnPaidPlan: on the paid plan, a tagged call that
// scores under its gate is not metered — refunded once by the eval pass,
// so a later thumbs_down finds it already refunded. On the free plan the
// same call stays charged until feedback asks.
func TestEvalGatedRefundOnPaidPlan(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: `
		org payer {
			plan paid
			key ` + payerKey + `
		}`})
	for _, tc := range []struct {
		key, want string
	}{
		{payerKey, "already_refunded"},
		{demoKey, "credited"},
	} {
		post := func(path, body string) gjson.Result {
			status, out, _ := g.do(http.MethodPost, path, tc.key, body)
			if status/100 != 2 {
				t.Fatalf("POST %s: %d %s", path, status, out)
			}
			return gjson.ParseBytes(out)
		}
		ev := post("/evaluators", `{"name":"never","kind":"regex","config":{"pattern":"^NEVER"}}`)
		post("/operations", fmt.Sprintf(`{"key":"strict_op","name":"Strict","ship_gates":[{"evaluator_id":%q,"min_score":0.5}]}`, ev.Get("id").String()))
		call := post("/chat/completions", chatBody("demo/demo-chat", "judge me", `"metadata":{"operation_id":"strict_op"}`))
		if !call.Get("delivery.evals.scheduled").Bool() || call.Get("delivery.cost_usd").Float() <= 0 {
			t.Fatalf("call: %s", call.Get("delivery").Raw)
		}
		// The eval pass (a regex, milliseconds) scores it first; only then
		// does feedback ask for the refund, once.
		time.Sleep(700 * time.Millisecond)
		fb := post("/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, call.Get("id").String()))
		if got := fb.Get("refund.status").String(); got != tc.want {
			t.Fatalf("refund status %q, want %q: %s", got, tc.want, fb.Raw)
		}
	}
}
