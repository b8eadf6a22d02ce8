package reliability

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// refundEntries counts the org's refund entries of the call.
func refundEntries(t *testing.T, s *BoltStore, orgID, callID string) int {
	t.Helper()
	_, entries := sumOfEntries(t, s, orgID)
	n := 0
	for _, e := range entries {
		if e.Kind == LedgerRefund && e.CallID != nil && *e.CallID == callID {
			n++
		}
	}
	return n
}

func TestRefundCallAtMostOnce(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	if err := s.Charge(org.ID, "call_1", 0.25); err != nil {
		t.Fatal(err)
	}
	refunded, amount, err := s.RefundCall(org.ID, "call_1", RefundReasonEvalGate)
	if err != nil || !refunded || amount != 0.25 {
		t.Fatalf("first refund = %v, %v, %v", refunded, amount, err)
	}
	refunded, amount, err = s.RefundCall(org.ID, "call_1", RefundReasonThumbsDown)
	if err != nil || refunded || amount != 0 {
		t.Fatalf("second refund = %v, %v, %v; want nothing", refunded, amount, err)
	}
	if bal, _ := s.Balance(org.ID); bal != 5 {
		t.Fatalf("balance after charge and refund = %v, want 5", bal)
	}
	if n := refundEntries(t, s, org.ID, "call_1"); n != 1 {
		t.Fatalf("%d refund entries", n)
	}
}

func TestRefundCallNotCharged(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	if refunded, _, err := s.RefundCall(a.ID, "call_never", "x"); err != nil || refunded {
		t.Fatalf("refund of an uncharged call = %v, %v", refunded, err)
	}
	if err := s.Charge(a.ID, "call_a", 1); err != nil {
		t.Fatal(err)
	}
	if refunded, _, err := s.RefundCall(b.ID, "call_a", "x"); err != nil || refunded {
		t.Fatalf("another org refunded org a's call: %v, %v", refunded, err)
	}
	out, err := s.refund(a.ID, "call_never", "x")
	if err != nil || out.Status != RefundNotCharged {
		t.Fatalf("outcome = %+v, %v", out, err)
	}
}

func TestConcurrentRefundsMakeOne(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	if err := s.Charge(org.ID, "call_1", 0.5); err != nil {
		t.Fatal(err)
	}
	var credited atomic.Int32
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refunded, _, err := s.RefundCall(org.ID, "call_1", RefundReasonThumbsDown)
			if err != nil {
				t.Error(err)
			}
			if refunded {
				credited.Add(1)
			}
		}()
	}
	wg.Wait()
	if credited.Load() != 1 || refundEntries(t, s, org.ID, "call_1") != 1 {
		t.Fatalf("%d refunds reported, %d entries", credited.Load(), refundEntries(t, s, org.ID, "call_1"))
	}
}

func TestFairUseDefaults(t *testing.T) {
	// withValue adds the defaults of the value caps to a count setting.
	withValue := func(f FairUse) FairUse {
		f.MaxValueShare, f.AllowanceUSD = 0.5, 0.25
		f.EvalGate = EvalGateLimits{MaxValueShare: 0.25, MinScored: 20, MaxFailShare: 0.9}
		return f
	}
	tests := []struct {
		in, want FairUse
	}{
		{FairUse{}, withValue(FairUse{MaxRefunds: 100, MaxShare: 0.5})},
		{FairUse{MaxRefunds: 3}, withValue(FairUse{MaxRefunds: 3, MaxShare: 0})},
		{FairUse{MaxShare: 0.2}, withValue(FairUse{MaxRefunds: 100, MaxShare: 0.2})},
		{FairUse{MaxRefunds: -1, MaxShare: 1}, withValue(FairUse{MaxRefunds: 100, MaxShare: 1})},
		// A value setting alone keeps the count defaults.
		{FairUse{MaxValueShare: 0.3, MaxRefundUSD: 10, AllowanceUSD: -1},
			FairUse{MaxRefunds: 100, MaxShare: 0.5, MaxValueShare: 0.3, MaxRefundUSD: 10,
				EvalGate: EvalGateLimits{MaxValueShare: 0.25, MinScored: 20, MaxFailShare: 0.9}}},
		{FairUse{EvalGate: EvalGateLimits{MaxValueShare: 0.1, MaxRefundUSD: 2, MinScored: 500, MaxFailShare: 0.8}},
			FairUse{MaxRefunds: 100, MaxShare: 0.5, MaxValueShare: 0.5, AllowanceUSD: 0.25,
				EvalGate: EvalGateLimits{MaxValueShare: 0.1, MaxRefundUSD: 2, MinScored: GateHealthWindow, MaxFailShare: 0.8}}},
	}
	for _, tt := range tests {
		if got := tt.in.withDefaults(); got != tt.want {
			t.Errorf("%+v.withDefaults() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// chargedCalls records n charged calls of the org made at the given time.
func chargedCalls(t *testing.T, s *BoltStore, orgID string, at time.Time, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		c := testCall("", orgID, nil, at)
		s.RecordCall(c)
		ids[i] = c.ID
		if err := s.Charge(orgID, c.ID, 0.01); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// thumbsDown gives thumbs_down feedback at the given time.
func thumbsDown(t *testing.T, s *BoltStore, orgID, callID string, at time.Time, fair FairUse) string {
	t.Helper()
	fb := Feedback{OrgID: orgID, CallID: callID, Rating: ptr(RatingThumbsDown), CreatedAt: at}
	if err := s.CreateFeedback(&fb, fair); err != nil {
		t.Fatal(err)
	}
	return fb.Refund.Status
}

func TestFairUseCountCap(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := chargedCalls(t, s, org.ID, now.Add(-time.Hour), 5)
	fair := FairUse{MaxRefunds: 2}
	var got []string
	for _, id := range ids[:3] {
		got = append(got, thumbsDown(t, s, org.ID, id, now, fair))
	}
	if got[0] != RefundCredited || got[1] != RefundCredited || got[2] != RefundCapped {
		t.Fatalf("outcomes = %v, want credited, credited, capped", got)
	}
	// A day later the window has moved on: refunds are possible again.
	if st := thumbsDown(t, s, org.ID, ids[3], now.Add(FairUseWindow+time.Minute), fair); st != RefundCredited {
		t.Fatalf("after the window: %s", st)
	}
	if n := refundEntries(t, s, org.ID, ids[2]); n != 0 {
		t.Fatal("a capped thumbs_down was refunded")
	}
}

func TestFairUseShareCap(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := chargedCalls(t, s, org.ID, now.Add(-time.Minute), 4)
	var got []string
	for _, id := range ids {
		got = append(got, thumbsDown(t, s, org.ID, id, now, FairUse{}))
	}
	// Half of 4 calls: 2 refunds, then capped.
	want := []string{RefundCredited, RefundCredited, RefundCapped, RefundCapped}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outcomes = %v, want %v", got, want)
		}
	}
	// The first call of an org is always refundable, even made long ago.
	other, _ := s.EnsureOrg("other")
	old := chargedCalls(t, s, other.ID, now.Add(-72*time.Hour), 1)
	if st := thumbsDown(t, s, other.ID, old[0], now, FairUse{}); st != RefundCredited {
		t.Fatalf("an org's only call: %s", st)
	}
}

func TestFairUseWithoutShareCap(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := chargedCalls(t, s, org.ID, now, 3)
	for _, id := range ids {
		if st := thumbsDown(t, s, org.ID, id, now, FairUse{MaxRefunds: 10, MaxShare: 0}); st != RefundCredited {
			t.Fatalf("without a share cap: %s", st)
		}
	}
}

// pricedCalls records one charged call of the org per cost, made at the
// given time.
func pricedCalls(t *testing.T, s *BoltStore, orgID string, at time.Time, costs ...float64) []string {
	t.Helper()
	ids := make([]string, len(costs))
	for i, cost := range costs {
		c := testCall("", orgID, nil, at)
		s.RecordCall(c)
		ids[i] = c.ID
		if err := s.Charge(orgID, c.ID, cost); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestFairUseValueCap: the count caps allow two refunds of four calls, but
// the two most expensive calls are nearly all of the spend, so the value
// cap (half of what was charged in the window) holds back the second.
func TestFairUseValueCap(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := pricedCalls(t, s, org.ID, now.Add(-time.Minute), 1, 1, 0.01, 0.01)
	if st := thumbsDown(t, s, org.ID, ids[0], now, FairUse{}); st != RefundCredited {
		t.Fatalf("first expensive call: %s", st)
	}
	if st := thumbsDown(t, s, org.ID, ids[1], now, FairUse{}); st != RefundCapped {
		t.Fatalf("second expensive call: %s, want capped by value", st)
	}
	if n := refundEntries(t, s, org.ID, ids[1]); n != 0 {
		t.Fatal("a call capped by value was refunded")
	}
	// 1.01 of 2.02 charged: a cheap call still fits under half.
	if st := thumbsDown(t, s, org.ID, ids[2], now, FairUse{}); st != RefundCredited {
		t.Fatalf("cheap call: %s", st)
	}
	if bal, _ := s.Balance(org.ID); bal < StartingCreditUSD-2.02+1.01-1e-9 || bal > StartingCreditUSD-2.02+1.01+1e-9 {
		t.Fatalf("balance = %v, want %v", bal, StartingCreditUSD-2.02+1.01)
	}
	// Shares of 1 let the caps give everything back.
	if st := thumbsDown(t, s, org.ID, ids[1], now, FairUse{MaxShare: 1, MaxValueShare: 1}); st != RefundCredited {
		t.Fatalf("with max_value_share 1: %s", st)
	}
}

// TestFairUseAbsoluteCap: MaxRefundUSD bounds the window's refunds in USD,
// whatever the share allows.
func TestFairUseAbsoluteCap(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := pricedCalls(t, s, org.ID, now.Add(-time.Minute), 0.4, 0.4, 0.4, 0.4, 0.4, 0.4)
	fair := FairUse{MaxRefundUSD: 0.5}
	if st := thumbsDown(t, s, org.ID, ids[0], now, fair); st != RefundCredited {
		t.Fatalf("first: %s", st)
	}
	if st := thumbsDown(t, s, org.ID, ids[1], now, fair); st != RefundCapped {
		t.Fatalf("second: %s, want capped at 0.5 USD", st)
	}
}

// TestFairUseAllowance: an org's first refund of a small call is possible
// even though it is all the org spent; a large one is not.
func TestFairUseAllowance(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	now := time.Now().UTC()
	small, _ := s.EnsureOrg("small")
	ids := pricedCalls(t, s, small.ID, now, 0.2)
	if st := thumbsDown(t, s, small.ID, ids[0], now, FairUse{}); st != RefundCredited {
		t.Fatalf("small first call: %s", st)
	}
	large, _ := s.EnsureOrg("large")
	ids = pricedCalls(t, s, large.ID, now, 3)
	if st := thumbsDown(t, s, large.ID, ids[0], now, FairUse{}); st != RefundCapped {
		t.Fatalf("large first call: %s, want capped", st)
	}
	if st := thumbsDown(t, s, large.ID, ids[0], now, FairUse{AllowanceUSD: 5}); st != RefundCredited {
		t.Fatalf("large first call within a 5 USD allowance: %s", st)
	}
}

// TestRefundGivesBackExactlyTheCharge: a call charged twice is refunded
// the sum of its charges, to the nano-USD, and nothing more.
func TestRefundGivesBackExactlyTheCharge(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	ids := pricedCalls(t, s, org.ID, time.Now(), 0.123456789)
	if err := s.Charge(org.ID, ids[0], 0.000000011); err != nil {
		t.Fatal(err)
	}
	fb := Feedback{OrgID: org.ID, CallID: ids[0], Rating: ptr(RatingThumbsDown)}
	if err := s.CreateFeedback(&fb, FairUse{}); err != nil {
		t.Fatal(err)
	}
	if fb.Refund.Status != RefundCredited || fb.Refund.AmountUSD != 0.1234568 {
		t.Fatalf("refund = %+v, want 0.1234568 credited", fb.Refund)
	}
	if bal, _ := s.Balance(org.ID); bal != StartingCreditUSD {
		t.Fatalf("balance = %v, want %v", bal, StartingCreditUSD)
	}
}

// TestRefundIndexReadsOlderEntries: entries written before the refund
// index kept amounts hold the call id; they count as the call's charge.
func TestRefundIndexReadsOlderEntries(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := pricedCalls(t, s, org.ID, now, 0.3, 0.2)
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFeedbackRefundsByOrg)
		if err := b.Put(indexKey(indexPrefix(org.ID), now, ids[0]), []byte(ids[0])); err != nil {
			return err
		}
		return b.Put(indexKey(indexPrefix(org.ID), now, ids[1]), refundIndexValue(2e8))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		n, nanos := sumRefundsSince(tx.Bucket(bucketFeedbackRefundsByOrg), tx.Bucket(bucketCallCharges), indexPrefix(org.ID), now.Add(-time.Hour))
		if n != 2 || nanos != 5e8 {
			t.Errorf("sum = %d entries, %d nano-USD; want 2, 5e8", n, nanos)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
