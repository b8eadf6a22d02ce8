package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
)

// Outcomes of a refund request, as the feedback response reports them.
const (
	// RefundCredited means the call's charge was given back now.
	RefundCredited = "credited"
	// RefundAlreadyRefunded means an earlier request (feedback or the eval
	// pass) refunded the call already: a call is refunded at most once.
	RefundAlreadyRefunded = "already_refunded"
	// RefundCapped means the org reached its fair-use cap: the feedback is
	// kept, no credit is made.
	RefundCapped = "capped"
	// RefundNotCharged means nothing was charged for the call (a free
	// model, or a call not metered), so there is nothing to give back.
	RefundNotCharged = "not_charged"
)

// Reasons a refund entry records.
const (
	// RefundReasonThumbsDown is a refund asked for by thumbs_down feedback.
	RefundReasonThumbsDown = "thumbs_down"
	// RefundReasonEvalGate is the paid plan's refund of a call that scored
	// under a ship gate in the eval pass.
	RefundReasonEvalGate = "eval_gate"
)

// Defaults of FairUse.
const (
	// DefaultFairUseMaxRefunds is how many feedback refunds an org gets per
	// rolling 24 hours.
	DefaultFairUseMaxRefunds = 100
	// DefaultFairUseMaxShare is the largest share of an org's calls of the
	// last 24 hours that feedback may refund.
	DefaultFairUseMaxShare = 0.5
)

// FairUseWindow is the rolling window the fair-use caps count over.
const FairUseWindow = 24 * time.Hour

// FairUse caps the refunds thumbs_down feedback can ask for, per org over
// the rolling FairUseWindow (SPEC section 1: subject to fair-use limits).
// The eval pass's refunds of the paid plan are not capped: they are the
// plan's guarantee that exploring a cheaper path never costs the caller.
//
// The zero FairUse means both defaults. Otherwise a MaxRefunds of zero or
// less means DefaultFairUseMaxRefunds, and a MaxShare of zero or less means
// no share cap.
type FairUse struct {
	// MaxRefunds is the most feedback refunds per org in the window.
	MaxRefunds int
	// MaxShare is the largest share (0 to 1) of the org's calls made in
	// the window that feedback may refund, rounded up, so that an org's
	// first call can always be refunded.
	MaxShare float64
}

// withDefaults applies the defaults documented on FairUse.
func (f FairUse) withDefaults() FairUse {
	if f == (FairUse{}) {
		return FairUse{MaxRefunds: DefaultFairUseMaxRefunds, MaxShare: DefaultFairUseMaxShare}
	}
	if f.MaxRefunds <= 0 {
		f.MaxRefunds = DefaultFairUseMaxRefunds
	}
	return f
}

// RefundCall gives the org back what was charged for the call, unless the
// call was refunded already: whatever asks (feedback, the eval pass), a
// call is refunded at most once. The check and the refund share one
// transaction, with the refund marker keyed by call id. It reports whether
// this request made the refund and its amount in USD; a call never charged
// (or charged to another org) is not refunded.
func (s *BoltStore) RefundCall(orgID, callID, reason string) (refunded bool, amount float64, err error) {
	out, err := s.refund(orgID, callID, reason)
	if err != nil {
		return false, 0, err
	}
	return out.Status == RefundCredited, out.AmountUSD, nil
}

// refund is RefundCall reporting the outcome in full.
func (s *BoltStore) refund(orgID, callID, reason string) (RefundOutcome, error) {
	var out RefundOutcome
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		out, err = refundInTx(tx, orgID, callID, reason, time.Now(), nil)
		return err
	})
	if err != nil {
		return RefundOutcome{}, fmt.Errorf("refund call %s of org %s: %w", callID, orgID, err)
	}
	return out, nil
}

// refundInTx refunds the call within tx. With fair set, a refund that would
// exceed the org's fair use at time at is not made; without one, it is.
func refundInTx(tx *bolt.Tx, orgID, callID, reason string, at time.Time, fair *FairUse) (RefundOutcome, error) {
	refunds := tx.Bucket(bucketCallRefunds)
	if refunds.Get([]byte(callID)) != nil {
		return RefundOutcome{Status: RefundAlreadyRefunded}, nil
	}
	var cc callCharge
	err := getJSON(tx.Bucket(bucketCallCharges), []byte(callID), &cc)
	if errors.Is(err, ErrNotFound) || (err == nil && (cc.OrgID != orgID || cc.Nanos <= 0)) {
		return RefundOutcome{Status: RefundNotCharged}, nil
	}
	if err != nil {
		return RefundOutcome{}, err
	}
	if fair != nil {
		if !withinFairUse(tx, orgID, callID, at, *fair) {
			return RefundOutcome{Status: RefundCapped}, nil
		}
		key := indexKey(indexPrefix(orgID), at.UTC(), callID)
		if err := tx.Bucket(bucketFeedbackRefundsByOrg).Put(key, []byte(callID)); err != nil {
			return RefundOutcome{}, fmt.Errorf("count refund for fair use: %w", err)
		}
	}
	entry, err := appendLedger(tx, orgID, LedgerRefund, cc.Nanos, &callID, reason, at)
	if err != nil {
		return RefundOutcome{}, err
	}
	if err := refunds.Put([]byte(callID), []byte(entry.ID)); err != nil {
		return RefundOutcome{}, fmt.Errorf("mark call refunded: %w", err)
	}
	return RefundOutcome{Status: RefundCredited, AmountUSD: entry.AmountUSD}, nil
}

// withinFairUse reports whether one more feedback refund, of callID at time
// at, stays within the org's caps. It counts in the same transaction that
// makes the refund, so concurrent feedback cannot overshoot a cap. The
// refunded call always counts among the org's calls, even when it was made
// before the window.
func withinFairUse(tx *bolt.Tx, orgID, callID string, at time.Time, f FairUse) bool {
	f = f.withDefaults()
	since := at.Add(-FairUseWindow)
	prefix := indexPrefix(orgID)
	refunded := countSince(tx.Bucket(bucketFeedbackRefundsByOrg), prefix, since)
	if refunded+1 > f.MaxRefunds {
		return false
	}
	if f.MaxShare <= 0 {
		return true
	}
	calls := countSince(tx.Bucket(bucketCallsByOrg), prefix, since)
	var created time.Time
	if raw := tx.Bucket(bucketCalls).Get([]byte(callID)); raw != nil {
		created = gjson.GetBytes(raw, "created_at").Time()
	}
	if created.Before(since) {
		calls++
	}
	return refunded+1 <= int(math.Ceil(f.MaxShare*float64(calls)))
}

// countSince counts the entries of an index under prefix made at or after
// since: the index keys are in time order, so it seeks to since and counts
// forward.
func countSince(b *bolt.Bucket, prefix []byte, since time.Time) int {
	start := append(bytes.Clone(prefix), sortPosition(since, "")...)
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}
