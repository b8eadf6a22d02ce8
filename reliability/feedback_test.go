package reliability

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCreateFeedbackStoresAndRefunds(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	now := time.Now().UTC()
	ids := chargedCalls(t, s, org.ID, now, 2)

	up := Feedback{OrgID: org.ID, CallID: ids[0], Rating: ptr(RatingThumbsUp), CreatedAt: now}
	if err := s.CreateFeedback(&up, FairUse{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(up.ID, "fb_") || up.Object != ObjectFeedback || up.Tags == nil || up.Refund != nil {
		t.Fatalf("thumbs_up feedback = %+v", up)
	}
	got, err := s.Feedback(up.ID)
	if err != nil || got.CallID != ids[0] || *got.Rating != RatingThumbsUp {
		t.Fatalf("stored feedback = %+v, %v", got, err)
	}

	down := Feedback{OrgID: org.ID, CallID: ids[0], Rating: ptr(RatingThumbsDown), Tags: []string{"wrong"}, CreatedAt: now}
	if err := s.CreateFeedback(&down, FairUse{}); err != nil {
		t.Fatal(err)
	}
	if down.Refund == nil || down.Refund.Status != RefundCredited || down.Refund.AmountUSD != 0.01 {
		t.Fatalf("thumbs_down refund = %+v", down.Refund)
	}
	again := Feedback{OrgID: org.ID, CallID: ids[0], Rating: ptr(RatingThumbsDown), CreatedAt: now}
	if err := s.CreateFeedback(&again, FairUse{}); err != nil {
		t.Fatal(err)
	}
	if again.Refund.Status != RefundAlreadyRefunded || again.Refund.AmountUSD != 0 {
		t.Fatalf("second thumbs_down = %+v", again.Refund)
	}

	free := testCall("", org.ID, nil, now)
	s.RecordCall(free)
	fb := Feedback{OrgID: org.ID, CallID: free.ID, Rating: ptr(RatingThumbsDown), CreatedAt: now}
	if err := s.CreateFeedback(&fb, FairUse{}); err != nil {
		t.Fatal(err)
	}
	if fb.Refund.Status != RefundNotCharged {
		t.Fatalf("thumbs_down on an uncharged call = %+v", fb.Refund)
	}
}

func TestCreateFeedbackChecksCall(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	ids := chargedCalls(t, s, a.ID, time.Now(), 1)
	fb := Feedback{OrgID: b.ID, CallID: ids[0], Rating: ptr(RatingThumbsDown)}
	if err := s.CreateFeedback(&fb, FairUse{}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("feedback on another org's call: %v", err)
	}
	if fb.ID != "" {
		t.Fatal("refused feedback got an id")
	}
	fb = Feedback{OrgID: a.ID, CallID: "call_missing", Rating: ptr(RatingThumbsUp)}
	if err := s.CreateFeedback(&fb, FairUse{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("feedback on a missing call: %v", err)
	}
	if n := refundEntries(t, s, a.ID, ids[0]); n != 0 {
		t.Fatal("another org's thumbs_down refunded the call")
	}
}
