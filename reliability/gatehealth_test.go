package reliability

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// evalGateRefunds lists the org's refund entries with reason eval_gate, by
// call id.
func evalGateRefunds(t *testing.T, s *BoltStore, orgID string) map[string]float64 {
	t.Helper()
	_, entries := sumOfEntries(t, s, orgID)
	got := map[string]float64{}
	for _, e := range entries {
		if e.Kind == LedgerRefund && e.Reason == RefundReasonEvalGate && e.CallID != nil {
			got[*e.CallID] += e.AmountUSD
		}
	}
	return got
}

// paidFixture is a fixture whose org is on the paid plan with one gate of
// a regex that never matches an answer, at min_score 1: every call fails.
func paidFixture(t *testing.T) (*fixture, Evaluator) {
	t.Helper()
	f := newFixture(t)
	never := f.evaluator(t, KindRegex, `{"pattern":"^NEVER$"}`)
	f.gates(t, ShipGate{EvaluatorID: never.ID, MinScore: 1})
	if _, err := f.s.SetOrgPlan(f.org.ID, PlanPaid); err != nil {
		t.Fatal(err)
	}
	return f, never
}

// scoreOne serves a call, runs its eval pass and returns the scores.
func scoreOne(t *testing.T, f *fixture, w *Worker, answer string, cost float64) CallScores {
	t.Helper()
	c := f.servedCall(t, answer, "fp_p_1", cost)
	w.ScheduleEvalPass(c)
	return waitScores(t, f.s, c.ID)
}

// TestNeverMatchingGateCannotMakeEveryCallFree: an org-defined gate that
// fails every call is refunded only up to the eval-gated cap, then flagged
// unreliable, after which its failures make no refund at all.
func TestNeverMatchingGateCannotMakeEveryCallFree(t *testing.T) {
	f, never := paidFixture(t)
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{})
	const calls, cost = 25, 0.1
	var statuses []string
	var charged, credited float64
	for i := range calls {
		cs := scoreOne(t, f, w, "Echo: hi", cost)
		charged += cost
		if cs.Passed || cs.Refund == nil {
			t.Fatalf("call %d: %+v", i, cs)
		}
		statuses = append(statuses, cs.Refund.Status)
		if cs.Refund.Status == RefundCredited {
			if cs.Refund.AmountUSD != cost {
				t.Fatalf("call %d refunded %v, not its charge", i, cs.Refund.AmountUSD)
			}
			credited += cost
		}
		// Eval-gated refunds stay within a quarter of the spend, or the
		// allowance.
		if credited > max(DefaultEvalGateMaxValueShare*charged, DefaultRefundAllowanceUSD)+1e-9 {
			t.Fatalf("after %d calls, %v of %v USD refunded: %v", i+1, credited, charged, statuses)
		}
		// The gate is flagged on its DefaultGateMinScored-th failure.
		flagged := i+1 >= DefaultGateMinScored
		if flagged != (cs.Refund.Status == RefundGateUnreliable) || cs.Gates[0].Unreliable != flagged {
			t.Fatalf("call %d: refund %s, gate %+v; want flagged = %v", i, cs.Refund.Status, cs.Gates[0], flagged)
		}
	}
	joined := strings.Join(statuses, ",")
	if !strings.Contains(joined, RefundCapped) || !strings.Contains(joined, RefundCredited) {
		t.Fatalf("outcomes %v: want some credited, then capped", statuses)
	}

	// The ledger has exactly the credited refunds, with reason eval_gate.
	if got := evalGateRefunds(t, f.s, f.org.ID); len(got) != strings.Count(joined, RefundCredited) {
		t.Fatalf("%d eval_gate refund entries for outcomes %v", len(got), statuses)
	}
	h, err := f.s.GateHealth(f.op.ID, never.ID)
	if err != nil || !h.Unreliable || h.FlaggedAt == nil || h.Scored != calls || h.Failed != calls {
		t.Fatalf("gate health = %+v, %v", h, err)
	}
	op, err := f.s.Operation(f.op.ID)
	if err != nil || !op.ShipGates[0].Unreliable {
		t.Fatalf("operation gates = %+v, %v", op.ShipGates, err)
	}
	body, _ := json.Marshal(op)
	if !strings.Contains(string(body), `"unreliable":true`) {
		t.Fatalf("operation JSON does not show the flag: %s", body)
	}
}

// TestClearingUnreliableGateRestoresRefunds: a flagged gate refunds again
// once an operator clears it, and is judged afresh from then on.
func TestClearingUnreliableGateRestoresRefunds(t *testing.T) {
	f, never := paidFixture(t)
	fair := FairUse{MaxValueShare: 1, EvalGate: EvalGateLimits{MaxValueShare: 1, MinScored: 3}}
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{FairUse: fair})
	want := []string{RefundCredited, RefundCredited, RefundGateUnreliable, RefundGateUnreliable}
	var last CallScores
	for i, st := range want {
		last = scoreOne(t, f, w, "Echo: hi", 0.05)
		if last.Refund == nil || last.Refund.Status != st {
			t.Fatalf("call %d: refund %+v, want %s", i, last.Refund, st)
		}
	}
	if n := refundEntries(t, f.s, f.org.ID, last.CallID); n != 0 {
		t.Fatal("a call failing only an unreliable gate was refunded")
	}
	// The call shows why it was not refunded.
	c, err := f.s.Call(last.CallID)
	if err != nil || c.EvalPass == nil || c.EvalPass.Refund == nil || c.EvalPass.Refund.Status != RefundGateUnreliable ||
		!c.EvalPass.Gates[0].Unreliable {
		t.Fatalf("call eval pass = %+v, %v", c.EvalPass, err)
	}

	h, err := f.s.ClearGateHealth(f.op.ID, never.ID, time.Now())
	if err != nil || h.Unreliable || h.Scored != 0 || h.ClearedAt == nil {
		t.Fatalf("cleared = %+v, %v", h, err)
	}
	if op, _ := f.s.Operation(f.op.ID); op.ShipGates[0].Unreliable {
		t.Fatal("the operation still shows the gate unreliable")
	}
	cs := scoreOne(t, f, w, "Echo: hi", 0.05)
	if cs.Refund == nil || cs.Refund.Status != RefundCredited || cs.Gates[0].Unreliable {
		t.Fatalf("after clearing: %+v", cs)
	}
	if got := evalGateRefunds(t, f.s, f.org.ID)[cs.CallID]; got != 0.05 {
		t.Fatalf("refund entry of %v USD", got)
	}
	if h, _ := f.s.GateHealth(f.op.ID, never.ID); h.Scored != 1 || h.Unreliable {
		t.Fatalf("health after clearing = %+v", h)
	}
	if _, err := f.s.ClearGateHealth(f.op.ID, "evr_unknown", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("clearing an unknown gate: %v", err)
	}
}

// TestUnreliableGateLeavesOtherGatesRefunding: a call that fails a healthy
// gate is refunded even when it also fails a flagged one.
func TestUnreliableGateLeavesOtherGatesRefunding(t *testing.T) {
	f, never := paidFixture(t)
	echo := f.evaluator(t, KindRegex, `{"pattern":"^Echo"}`)
	f.gates(t, ShipGate{EvaluatorID: never.ID, MinScore: 1}, ShipGate{EvaluatorID: echo.ID, MinScore: 1})
	fair := FairUse{MaxValueShare: 1, EvalGate: EvalGateLimits{MaxValueShare: 1, MinScored: 3}}
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{FairUse: fair})
	for i, st := range []string{RefundCredited, RefundCredited, RefundGateUnreliable} {
		if cs := scoreOne(t, f, w, "Echo: hi", 0.05); cs.Refund == nil || cs.Refund.Status != st {
			t.Fatalf("call %d: %+v, want %s", i, cs.Refund, st)
		}
	}
	cs := scoreOne(t, f, w, "wrong", 0.05)
	if cs.Refund == nil || cs.Refund.Status != RefundCredited || !cs.Gates[0].Unreliable || cs.Gates[1].Unreliable || cs.Gates[1].Passed {
		t.Fatalf("a call failing the healthy gate: %+v", cs)
	}
}

// TestEvalGateValueCap: past the eval-gated cap the score is kept, the
// call shows capped, and the ledger has no entry for it.
func TestEvalGateValueCap(t *testing.T) {
	f, _ := paidFixture(t)
	fair := FairUse{AllowanceUSD: -1, EvalGate: EvalGateLimits{MaxValueShare: 0.5, MinScored: GateHealthWindow}}
	w := startWorker(t, f.s, &fakeModels{}, WorkerOptions{FairUse: fair})
	// Nothing spent but the call itself, no allowance: no refund.
	cs := scoreOne(t, f, w, "x", 0.1)
	if cs.Refund == nil || cs.Refund.Status != RefundCapped || cs.Passed || cs.Gates[0].Score == nil {
		t.Fatalf("first call: %+v", cs)
	}
	if n := refundEntries(t, f.s, f.org.ID, cs.CallID); n != 0 {
		t.Fatal("a capped call was refunded")
	}
	c, err := f.s.Call(cs.CallID)
	if err != nil || c.EvalPass == nil || c.EvalPass.Refund.Status != RefundCapped {
		t.Fatalf("call eval pass = %+v, %v", c.EvalPass, err)
	}
	// 0.2 charged: 0.1 is half of it.
	if cs := scoreOne(t, f, w, "x", 0.1); cs.Refund.Status != RefundCredited {
		t.Fatalf("second call: %+v", cs.Refund)
	}
	if cs := scoreOne(t, f, w, "x", 0.1); cs.Refund.Status != RefundCapped {
		t.Fatalf("third call: %+v", cs.Refund)
	}
	// The absolute cap holds however much was spent.
	g, _ := paidFixture(t)
	wg := startWorker(t, g.s, &fakeModels{}, WorkerOptions{FairUse: FairUse{EvalGate: EvalGateLimits{MaxRefundUSD: 0.15, MaxValueShare: 1}, MaxValueShare: 1}})
	for i, st := range []string{RefundCredited, RefundCapped} {
		if cs := scoreOne(t, g, wg, "x", 0.1); cs.Refund.Status != st {
			t.Fatalf("call %d under a 0.15 USD cap: %+v, want %s", i, cs.Refund, st)
		}
	}
}
