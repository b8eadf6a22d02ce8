package reliability

import (
	"sync"
	"testing"
	"time"
)

// TestHealthReportsAClosedStore: an open store is healthy; once closed,
// Health says so and the commit queue reports itself closed.
func TestHealthReportsAClosedStore(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{QueueSize: 64})
	if err := s.Health(); err != nil {
		t.Fatalf("open store: Health() = %v", err)
	}
	if q := s.CommitQueue(); q.Closed || q.Capacity != 64 || q.Pending != 0 {
		t.Fatalf("open store: CommitQueue() = %+v, want open, capacity 64, none pending", q)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); err == nil {
		t.Fatal("closed store: Health() = nil, want an error")
	}
	if q := s.CommitQueue(); !q.Closed {
		t.Fatalf("closed store: CommitQueue() = %+v, want closed", q)
	}
}

// TestOnCommitHearsEveryCommit: the writer tells OnCommit of each commit
// with the calls it held.
func TestOnCommitHearsEveryCommit(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	s, _ := openTestStore(t, BoltOptions{BatchDelay: time.Millisecond, OnCommit: func(n int, took time.Duration, err error) {
		if err != nil || took < 0 {
			t.Errorf("OnCommit(%d, %v, %v)", n, took, err)
		}
		mu.Lock()
		calls += n
		mu.Unlock()
	}})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.RecordCall(&Call{ID: NewID("chatcmpl-"), Object: "call", OrgID: org.ID, Model: "m", Status: CallSucceeded,
			RequestPayload: []byte(`{}`), ResponsePayload: []byte(`null`), CreatedAt: time.Now().Add(time.Duration(i))})
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Fatalf("OnCommit heard of %d calls, want 3", calls)
	}
}

// TestOnRefundHearsRefunds: a refund, then the same call's second refund,
// reach OnRefund with their outcomes.
func TestOnRefundHearsRefunds(t *testing.T) {
	var events []RefundEvent
	var mu sync.Mutex
	s, _ := openTestStore(t, BoltOptions{OnRefund: func(e RefundEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	id := NewID("chatcmpl-")
	s.RecordCall(&Call{ID: id, Object: "call", OrgID: org.ID, Model: "m", Status: CallSucceeded, ChargeUSD: 0.25,
		RequestPayload: []byte(`{}`), ResponsePayload: []byte(`null`), CreatedAt: time.Now()})
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := s.RefundCall(org.ID, id, RefundReasonThumbsDown); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []RefundEvent{
		{Reason: RefundReasonThumbsDown, Status: RefundCredited, AmountUSD: 0.25},
		{Reason: RefundReasonThumbsDown, Status: RefundAlreadyRefunded},
	}
	if len(events) != len(want) {
		t.Fatalf("OnRefund heard %+v, want %+v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, events[i], want[i])
		}
	}
}
