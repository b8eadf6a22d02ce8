package reliability

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// evidence is one OnEvidence call.
type evidence struct {
	orgID, operationID, provider, pathKey, evaluatorID string
	score                                              float64
	passed                                             bool
}

// evidenceLog collects OnEvidence calls.
type evidenceLog struct {
	mu  sync.Mutex
	got []evidence
}

func (l *evidenceLog) add(e GateEvidence) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, evidence{e.OrgID, e.OperationID, e.Provider, e.PathKey, e.EvaluatorID, e.Score, e.Passed})
}

func (l *evidenceLog) all() []evidence {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]evidence(nil), l.got...)
}

// servedCall records a charged chat call of the fixture's operation that
// answered answer to the prompt "hi", with prompt fingerprint fp.
func (f *fixture) servedCall(t *testing.T, answer, fp string, cost float64) Call {
	t.Helper()
	c := testCall("", f.org.ID, &f.op.Key, time.Now())
	c.ResponsePayload = json.RawMessage(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":` + string(jsonString(answer)) + `}}]}`)
	c.Delivery = json.RawMessage(`{"tier":"standard","fingerprints":{"prompt":"` + fp + `"}}`)
	c.PathKey = c.ModelVersion + "@full"
	f.s.RecordCall(c)
	if err := f.s.Sync(); err != nil {
		t.Fatal(err)
	}
	if cost > 0 {
		if err := f.s.Charge(f.org.ID, c.ID, cost); err != nil {
			t.Fatal(err)
		}
	}
	return *c
}

// waitScores waits for the eval pass of the call.
func waitScores(t *testing.T, s *BoltStore, callID string) CallScores {
	t.Helper()
	var cs CallScores
	waitFor(t, "the eval pass of "+callID, func() bool {
		var err error
		cs, err = s.CallScores(callID)
		return err == nil
	})
	return cs
}

func TestEvalPassScoresGatesAndRefundsOnPaid(t *testing.T) {
	f := newFixture(t)
	echo := f.evaluator(t, KindRegex, `{"pattern":"^Echo"}`)
	judge := f.evaluator(t, KindLLMJudge, `{"model":"judge/a","prompt":"Q: {{input}} A: {{output}}"}`)
	f.gates(t, ShipGate{EvaluatorID: echo.ID, MinScore: 0.5}, ShipGate{EvaluatorID: judge.ID, MinScore: 0.5})
	if _, err := f.s.SetOrgPlan(f.org.ID, PlanPaid); err != nil {
		t.Fatal(err)
	}
	var ev evidenceLog
	models := &fakeModels{}
	w := startWorker(t, f.s, models, WorkerOptions{OnEvidence: ev.add})

	bad := f.servedCall(t, "Echo: hi", "fp_p_1", 0.02)
	w.ScheduleEvalPass(bad)
	cs := waitScores(t, f.s, bad.ID)
	if cs.Passed || len(cs.Gates) != 2 || cs.OperationID != f.op.ID || cs.Provider != "demo" || cs.UpstreamModel != "demo/echo-1" {
		t.Fatalf("scores = %+v", cs)
	}
	if *cs.Gates[0].Score != 1 || !cs.Gates[0].Passed || *cs.Gates[1].Score != 0.3 || cs.Gates[1].Passed {
		t.Fatalf("gates = %+v", cs.Gates)
	}
	if cs.Refund == nil || cs.Refund.Status != RefundCredited || cs.Refund.AmountUSD != 0.02 {
		t.Fatalf("refund = %+v", cs.Refund)
	}
	if chats := models.calls(); len(chats) != 1 || chats[0].prompt != "Q: hi A: Echo: hi" {
		t.Fatalf("judge saw %+v", chats)
	}
	got := ev.all()
	if len(got) != 2 || got[0] != (evidence{f.org.ID, f.op.ID, "demo", "demo/echo-1@full", echo.ID, 1, true}) || got[1].passed {
		t.Fatalf("evidence = %+v", got)
	}

	good := f.servedCall(t, "Echo: GOOD", "fp_p_2", 0.02)
	w.ScheduleEvalPass(good)
	cs = waitScores(t, f.s, good.ID)
	if !cs.Passed || cs.Refund != nil {
		t.Fatalf("passing call = %+v", cs)
	}
	if n := refundEntries(t, f.s, f.org.ID, good.ID); n != 0 {
		t.Fatal("a passing call was refunded")
	}
}

func TestEvalPassFreePlanDoesNotRefund(t *testing.T) {
	f := newFixture(t)
	echo := f.evaluator(t, KindRegex, `{"pattern":"^Echo"}`)
	f.gates(t, ShipGate{EvaluatorID: echo.ID, MinScore: 1})
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{})
	c := f.servedCall(t, "something else", "fp_p_1", 0.02)
	w.ScheduleEvalPass(c)
	cs := waitScores(t, f.s, c.ID)
	if cs.Passed || cs.Refund != nil || refundEntries(t, f.s, f.org.ID, c.ID) != 0 {
		t.Fatalf("free plan = %+v", cs)
	}

	// PlanOf overrides the stored plan.
	paid := startWorker(t, f.s, &fakeModels{}, WorkerOptions{PlanOf: func(string) string { return PlanPaid }})
	c2 := f.servedCall(t, "something else", "fp_p_1", 0.02)
	paid.ScheduleEvalPass(c2)
	if cs := waitScores(t, f.s, c2.ID); cs.Refund == nil || cs.Refund.Status != RefundCredited {
		t.Fatalf("PlanOf paid = %+v", cs)
	}
}

func TestThumbsDownThenFailingEvalPassRefundsOnce(t *testing.T) {
	f := newFixture(t)
	echo := f.evaluator(t, KindRegex, `{"pattern":"^Echo"}`)
	f.gates(t, ShipGate{EvaluatorID: echo.ID, MinScore: 1})
	if _, err := f.s.SetOrgPlan(f.org.ID, PlanPaid); err != nil {
		t.Fatal(err)
	}
	c := f.servedCall(t, "wrong", "fp_p_1", 0.03)
	if st := thumbsDown(t, f.s, f.org.ID, c.ID, time.Now(), FairUse{}); st != RefundCredited {
		t.Fatalf("thumbs_down = %s", st)
	}
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{})
	w.ScheduleEvalPass(c)
	cs := waitScores(t, f.s, c.ID)
	if cs.Refund == nil || cs.Refund.Status != RefundAlreadyRefunded {
		t.Fatalf("eval pass refund = %+v", cs.Refund)
	}
	if n := refundEntries(t, f.s, f.org.ID, c.ID); n != 1 {
		t.Fatalf("%d refund entries, want 1", n)
	}
	if bal, _ := f.s.Balance(f.org.ID); bal != StartingCreditUSD {
		t.Fatalf("balance = %v, want the starting credit back", bal)
	}
}

func TestEvalPassEmbeddingMatchUsesGoldenItem(t *testing.T) {
	f := newFixture(t)
	emb := f.evaluator(t, KindEmbeddingMatch, `{"model":"embed/a","threshold":0.5}`)
	source := f.servedCall(t, "ignored", "fp_p_same", 0)
	ds := f.dataset(t, DatasetItem{SourceCallID: &source.ID, ExpectedOutput: json.RawMessage(`"Echo: hi"`), Weight: 1})
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.gates(t, ShipGate{EvaluatorID: emb.ID, MinScore: 0.9})
	models := &fakeModels{}
	w := startWorker(t, f.s, models, WorkerOptions{})

	same := f.servedCall(t, "Echo: hi", "fp_p_same", 0)
	w.ScheduleEvalPass(same)
	cs := waitScores(t, f.s, same.ID)
	if !cs.Passed || cs.Gates[0].Score == nil || *cs.Gates[0].Score < 0.999 {
		t.Fatalf("same prompt = %+v", cs.Gates)
	}
	models.mu.Lock()
	embedded := models.embed
	models.mu.Unlock()
	if len(embedded) != 1 || embedded[0][0] != "Echo: hi" || embedded[0][1] != "Echo: hi" {
		t.Fatalf("embedded %v", embedded)
	}

	other := f.servedCall(t, "Echo: hi", "fp_p_other", 0)
	w.ScheduleEvalPass(other)
	cs = waitScores(t, f.s, other.ID)
	if cs.Gates[0].Score != nil || !strings.Contains(cs.Gates[0].Skipped, "no golden dataset item") || !cs.Passed {
		t.Fatalf("other prompt = %+v", cs)
	}
}

func TestEvalPassSkipsWhatItCannotScore(t *testing.T) {
	f := newFixture(t)
	judge := f.evaluator(t, KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}"}`)
	f.gates(t, ShipGate{EvaluatorID: judge.ID, MinScore: 0.5}, ShipGate{EvaluatorID: "evr_gone", MinScore: 0.5})
	var ev evidenceLog
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{OnEvidence: ev.add})
	c := f.servedCall(t, "NO-NUMBER", "fp_p_1", 0)
	w.ScheduleEvalPass(c)
	cs := waitScores(t, f.s, c.ID)
	if !cs.Passed || cs.Gates[0].Score != nil || !strings.Contains(cs.Gates[0].Skipped, "has no number") ||
		!strings.Contains(cs.Gates[1].Skipped, "evaluator") || len(ev.all()) != 0 {
		t.Fatalf("scores = %+v, evidence %v", cs, ev.all())
	}
}

func TestScheduleEvalPassDrops(t *testing.T) {
	f := newFixture(t)
	echo := f.evaluator(t, KindRegex, `{"pattern":"^Echo"}`)
	f.gates(t, ShipGate{EvaluatorID: echo.ID, MinScore: 1})
	var mu sync.Mutex
	var logged []string
	logger := func(msg string, err error) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, msg+": "+err.Error())
	}
	w := NewWorker(f.s, &fakeModels{}, WorkerOptions{EvalPassQueue: 1, Logger: logger})
	c1 := f.servedCall(t, "Echo", "fp", 0)
	c2 := f.servedCall(t, "Echo", "fp", 0)
	w.ScheduleEvalPass(c1)
	w.ScheduleEvalPass(c2) // the queue of one is full
	noOp := c2
	noOp.OperationID = nil
	w.ScheduleEvalPass(noOp) // nothing to score: not queued, not logged
	mu.Lock()
	if len(logged) != 1 || !strings.Contains(logged[0], c2.ID) || !strings.Contains(logged[0], "full") {
		t.Fatalf("logged %v", logged)
	}
	mu.Unlock()
	w.Start()
	waitScores(t, f.s, c1.ID)
	w.Stop()
	w.ScheduleEvalPass(c2)
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || !strings.Contains(logged[1], "stopped") {
		t.Fatalf("logged %v", logged)
	}
	if _, err := f.s.CallScores(c2.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a dropped call was scored: %v", err)
	}
}
