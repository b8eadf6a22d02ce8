package reliability

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	tests := []struct {
		in, want FairUse
	}{
		{FairUse{}, FairUse{MaxRefunds: 100, MaxShare: 0.5}},
		{FairUse{MaxRefunds: 3}, FairUse{MaxRefunds: 3, MaxShare: 0}},
		{FairUse{MaxShare: 0.2}, FairUse{MaxRefunds: 100, MaxShare: 0.2}},
		{FairUse{MaxRefunds: -1, MaxShare: 1}, FairUse{MaxRefunds: 100, MaxShare: 1}},
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
