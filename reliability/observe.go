package reliability

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// RefundEvent is one refund request's outcome, as BoltOptions.OnRefund
// hears of it: for metrics, never for decisions.
type RefundEvent struct {
	// Reason is what asked: RefundReasonThumbsDown, RefundReasonEvalGate,
	// or the reason an operator gave RefundCall.
	Reason string
	// Status is the RefundOutcome status: RefundCredited, RefundCapped, ...
	Status string
	// AmountUSD is what was credited back; 0 unless Status is
	// RefundCredited.
	AmountUSD float64
}

// noteRefund tells OnRefund of a committed refund outcome.
func (s *BoltStore) noteRefund(reason string, out RefundOutcome) {
	if s.onRefund != nil {
		s.onRefund(RefundEvent{Reason: reason, Status: out.Status, AmountUSD: out.AmountUSD})
	}
}

// Health reports whether the store can serve: nil when its file is open
// and a read transaction goes through, the reason otherwise (a closed
// store says so).
func (s *BoltStore) Health() error {
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("the meta bucket is missing")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %s: %w", s.db.Path(), err)
	}
	return nil
}

// CommitQueue is the state of the call writer's queue.
type CommitQueue struct {
	// Pending is how many recorded calls wait for their commit.
	Pending int
	// Capacity is how many may wait before RecordCall blocks.
	Capacity int
	// Closed is set once the writer stopped taking calls (the store is
	// closing or closed).
	Closed bool
}

// CommitQueue reports the call writer's queue.
func (s *BoltStore) CommitQueue() CommitQueue {
	r := s.rec
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	return CommitQueue{Pending: int(r.pending.Load()), Capacity: r.limit, Closed: closed}
}
