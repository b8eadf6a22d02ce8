package reliability

import (
	"bytes"
	"encoding/binary"
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
	// RefundCapped means the org reached a fair-use cap (for feedback) or
	// the eval-gated refund cap (for the eval pass): the feedback or the
	// score is kept, no credit is made.
	RefundCapped = "capped"
	// RefundNotCharged means nothing was charged for the call (a free
	// model, or a call not metered), so there is nothing to give back.
	RefundNotCharged = "not_charged"
	// RefundGateUnreliable means the call failed only gates flagged
	// unreliable (GateHealth): the score is kept, no credit is made until
	// an operator clears the flag.
	RefundGateUnreliable = "gate_unreliable"
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
	// DefaultFairUseMaxValueShare is the largest share of what an org was
	// charged in the last 24 hours that refunds, feedback and eval-gated
	// together, may give back.
	DefaultFairUseMaxValueShare = 0.5
	// DefaultRefundAllowanceUSD is the value of refunds per org per window
	// that the value-share caps never hold back, so that an org's first
	// refund of a small call is always possible.
	DefaultRefundAllowanceUSD = 0.25
	// DefaultEvalGateMaxValueShare is the largest share of what an org was
	// charged in the last 24 hours that eval-gated refunds may give back.
	DefaultEvalGateMaxValueShare = 0.25
	// DefaultGateMinScored is how many scored calls a gate needs in its
	// window before it can be flagged unreliable.
	DefaultGateMinScored = 20
	// DefaultGateMaxFailShare is the share of failed calls among a gate's
	// last scored calls at which the gate is flagged unreliable.
	DefaultGateMaxFailShare = 0.9
)

// FairUseWindow is the rolling window the fair-use caps count over.
const FairUseWindow = 24 * time.Hour

// GateHealthWindow is how many of a gate's most recent scored calls the
// unreliable-gate rule looks at.
const GateHealthWindow = 50

// FairUse caps automatic refunds per org over the rolling FairUseWindow
// (SPEC section 1: subject to fair-use limits; DESIGN "refund limits").
//
// Feedback refunds (thumbs_down) are capped by count (MaxRefunds, MaxShare)
// and, with eval-gated refunds, by value: the refunds of the window may
// give back at most MaxValueShare of what the org was charged in the
// window (the refunded call's own charge always counts), and at most
// MaxRefundUSD. Eval-gated refunds have caps of their own besides
// (EvalGate). Refunds adding up to AllowanceUSD are never held back by a
// share cap, so an org's first refund of a small call is always possible.
//
// For the count caps, the zero FairUse (MaxRefunds and MaxShare both zero)
// means both defaults. Otherwise a MaxRefunds of zero or less means
// DefaultFairUseMaxRefunds, and a MaxShare of zero or less means no count
// share cap. The value fields each have their default when zero.
type FairUse struct {
	// MaxRefunds is the most feedback refunds per org in the window.
	MaxRefunds int
	// MaxShare is the largest share (0 to 1) of the org's calls made in
	// the window that feedback may refund, rounded up, so that an org's
	// first call can always be refunded.
	MaxShare float64
	// MaxValueShare is the largest share (0 to 1] of the value the org was
	// charged in the window that its refunds of the window, whatever asked
	// for them, may give back. Zero or less means
	// DefaultFairUseMaxValueShare; 1 lets refunds give back everything.
	MaxValueShare float64
	// MaxRefundUSD is the most the org's refunds of the window, whatever
	// asked for them, may give back in USD. Zero or less means no
	// absolute cap.
	MaxRefundUSD float64
	// AllowanceUSD is the value of the window's refunds that the share
	// caps (MaxValueShare, EvalGate.MaxValueShare) never hold back. Zero
	// means DefaultRefundAllowanceUSD; less than zero means none.
	AllowanceUSD float64
	// EvalGate caps the paid plan's eval-gated refunds and says when a
	// gate is flagged unreliable.
	EvalGate EvalGateLimits
}

// EvalGateLimits caps the eval-gated refunds of the paid plan per org over
// the rolling FairUseWindow, on top of FairUse's value caps, and sets the
// rule that flags a gate unreliable: a gate that fails at least
// MaxFailShare of its last scored calls (up to GateHealthWindow of them,
// at least MinScored), counted over every path that served the operation,
// the reference model's included, stops making refunds until an operator
// clears it (ClearGateHealth).
type EvalGateLimits struct {
	// MaxValueShare is the largest share (0 to 1] of the value the org was
	// charged in the window that eval-gated refunds may give back. Zero or
	// less means DefaultEvalGateMaxValueShare.
	MaxValueShare float64
	// MaxRefundUSD is the most eval-gated refunds may give back per org in
	// the window, in USD. Zero or less means no absolute cap.
	MaxRefundUSD float64
	// MinScored is how many scored calls in its window a gate needs before
	// it can be flagged. Zero or less means DefaultGateMinScored; more than
	// GateHealthWindow means GateHealthWindow.
	MinScored int
	// MaxFailShare is the share (0 to 1] of failed calls among the scored
	// calls of its window that flags a gate. Zero or less means
	// DefaultGateMaxFailShare.
	MaxFailShare float64
}

// withDefaults applies the defaults documented on FairUse.
func (f FairUse) withDefaults() FairUse {
	if f.MaxRefunds == 0 && f.MaxShare == 0 {
		f.MaxShare = DefaultFairUseMaxShare
	}
	if f.MaxRefunds <= 0 {
		f.MaxRefunds = DefaultFairUseMaxRefunds
	}
	if f.MaxValueShare <= 0 {
		f.MaxValueShare = DefaultFairUseMaxValueShare
	}
	if f.MaxRefundUSD < 0 {
		f.MaxRefundUSD = 0
	}
	switch {
	case f.AllowanceUSD == 0:
		f.AllowanceUSD = DefaultRefundAllowanceUSD
	case f.AllowanceUSD < 0:
		f.AllowanceUSD = 0
	}
	f.EvalGate = f.EvalGate.withDefaults()
	return f
}

// withDefaults applies the defaults documented on EvalGateLimits.
func (e EvalGateLimits) withDefaults() EvalGateLimits {
	if e.MaxValueShare <= 0 {
		e.MaxValueShare = DefaultEvalGateMaxValueShare
	}
	if e.MaxRefundUSD < 0 {
		e.MaxRefundUSD = 0
	}
	if e.MinScored <= 0 {
		e.MinScored = DefaultGateMinScored
	}
	e.MinScored = min(e.MinScored, GateHealthWindow)
	if e.MaxFailShare <= 0 {
		e.MaxFailShare = DefaultGateMaxFailShare
	}
	return e
}

// RefundCall gives the org back what was charged for the call, unless the
// call was refunded already: whatever asks (feedback, the eval pass), a
// call is refunded at most once. The check and the refund share one
// transaction, with the refund marker keyed by call id. It reports whether
// this request made the refund and its amount in USD; a call never charged
// (or charged to another org) is not refunded. RefundCall applies no
// fair-use cap (an operator's refund); a refund with reason thumbs_down or
// eval_gate still counts towards the org's caps.
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
	s.noteRefund(reason, out)
	return out, nil
}

// refundIndex is the index that counts the refunds of a reason for the
// fair-use window, or nil for a reason no cap counts.
func refundIndex(tx *bolt.Tx, reason string) *bolt.Bucket {
	switch reason {
	case RefundReasonThumbsDown:
		return tx.Bucket(bucketFeedbackRefundsByOrg)
	case RefundReasonEvalGate:
		return tx.Bucket(bucketEvalRefundsByOrg)
	}
	return nil
}

// refundInTx refunds the call within tx. With fair set, a refund that would
// exceed the org's caps at time at is not made (RefundCapped); without one,
// it is. The amount is always exactly what the ledger charged for the call.
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
		ok, err := withinFairUse(tx, orgID, callID, reason, cc.Nanos, at, *fair)
		if err != nil {
			return RefundOutcome{}, fmt.Errorf("check fair use: %w", err)
		}
		if !ok {
			return RefundOutcome{Status: RefundCapped}, nil
		}
	}
	if index := refundIndex(tx, reason); index != nil {
		if err := index.Put(indexKey(indexPrefix(orgID), at.UTC(), callID), refundIndexValue(cc.Nanos)); err != nil {
			return RefundOutcome{}, fmt.Errorf("count refund for fair use: %w", err)
		}
	}
	entry, err := appendLedger(tx, orgID, LedgerRefund, cc.Nanos, &callID, reason, at)
	if err != nil {
		return RefundOutcome{}, err
	}
	// A refund gives back exactly the call's charge, never more.
	if got, err := toNanos(entry.AmountUSD); err != nil || got != cc.Nanos {
		return RefundOutcome{}, fmt.Errorf("refund of call %s is %v USD, not its charge of %v USD", callID, entry.AmountUSD, fromNanos(cc.Nanos))
	}
	if err := refunds.Put([]byte(callID), []byte(entry.ID)); err != nil {
		return RefundOutcome{}, fmt.Errorf("mark call refunded: %w", err)
	}
	return RefundOutcome{Status: RefundCredited, AmountUSD: entry.AmountUSD}, nil
}

// refundIndexValue is the value of a refund index entry: a 0x00 byte (no
// call id, which older entries hold instead, starts with one), then the
// refunded nano-USD, 8 bytes big-endian.
func refundIndexValue(nanos int64) []byte {
	v := make([]byte, 1, 9)
	return binary.BigEndian.AppendUint64(v, uint64(nanos))
}

// refundedNanos reads the amount of a refund index entry. An entry written
// before amounts were kept holds the call id: its amount is the call's
// charge.
func refundedNanos(v []byte, charges *bolt.Bucket) int64 {
	if len(v) == 9 && v[0] == 0 {
		return int64(binary.BigEndian.Uint64(v[1:]))
	}
	raw := charges.Get(v)
	if raw == nil {
		return 0
	}
	return gjson.GetBytes(raw, "nanos").Int()
}

// withinFairUse reports whether one more refund of reason, of callID for
// amount nano-USD at time at, stays within the org's caps. It counts in the
// same transaction that makes the refund, so concurrent requests cannot
// overshoot a cap. The counts and amounts come from the refund indexes,
// and the charged value from the org's ledger index, summed only as far as
// needed; no call record is read but the refunded call's own (for the
// count share).
func withinFairUse(tx *bolt.Tx, orgID, callID, reason string, amount int64, at time.Time, f FairUse) (bool, error) {
	f = f.withDefaults()
	since := at.Add(-FairUseWindow)
	prefix := indexPrefix(orgID)
	charges := tx.Bucket(bucketCallCharges)
	fbCount, fbNanos := sumRefundsSince(tx.Bucket(bucketFeedbackRefundsByOrg), charges, prefix, since)
	_, evNanos := sumRefundsSince(tx.Bucket(bucketEvalRefundsByOrg), charges, prefix, since)

	if f.MaxRefundUSD > 0 && fromNanos(fbNanos+evNanos+amount) > f.MaxRefundUSD {
		return false, nil
	}
	caps := []valueCap{{refunded: fbNanos + evNanos, share: f.MaxValueShare}}
	switch reason {
	case RefundReasonThumbsDown:
		if fbCount+1 > f.MaxRefunds {
			return false, nil
		}
		if f.MaxShare > 0 {
			calls := countSince(tx.Bucket(bucketCallsByOrg), prefix, since)
			var created time.Time
			if raw := tx.Bucket(bucketCalls).Get([]byte(callID)); raw != nil {
				created = gjson.GetBytes(raw, "created_at").Time()
			}
			if created.Before(since) {
				calls++
			}
			if fbCount+1 > int(math.Ceil(f.MaxShare*float64(calls))) {
				return false, nil
			}
		}
	case RefundReasonEvalGate:
		if f.EvalGate.MaxRefundUSD > 0 && fromNanos(evNanos+amount) > f.EvalGate.MaxRefundUSD {
			return false, nil
		}
		caps = append(caps, valueCap{refunded: evNanos, share: f.EvalGate.MaxValueShare})
	}
	allowance, err := toNanos(f.AllowanceUSD)
	if err != nil {
		return false, fmt.Errorf("allowance: %w", err)
	}
	enough := func(charged int64) bool {
		for _, c := range caps {
			if !c.allows(amount, allowance, charged) {
				return false
			}
		}
		return true
	}
	return chargesReach(tx, orgID, callID, amount, since, enough), nil
}

// valueCap is one share cap on the value refunded in the window.
type valueCap struct {
	// refunded is what the refunds this cap counts gave back in the
	// window, in nano-USD.
	refunded int64
	// share is the largest share of the charged value they may give back.
	share float64
}

// allows reports whether a refund of amount keeps the cap, with charged
// nano-USD charged in the window: within the allowance, or within the
// share.
func (c valueCap) allows(amount, allowance, charged int64) bool {
	total := c.refunded + amount
	return total <= allowance || float64(total) <= c.share*float64(charged)
}

// chargesReach sums what the org was charged in the window from its ledger
// index until enough holds of the sum, and reports whether
// it did. The refunded call's charge (callNanos) always counts, even when
// it was made before the window; its own entries are skipped so that it
// does not count twice. The sum stops as soon as it suffices, so an org
// refunding little of a large spend reads few entries.
func chargesReach(tx *bolt.Tx, orgID, callID string, callNanos int64, since time.Time, enough func(int64) bool) bool {
	sum := callNanos
	if enough(sum) {
		return true
	}
	prefix := indexPrefix(orgID)
	start := append(bytes.Clone(prefix), sortPosition(since, "")...)
	entries := tx.Bucket(bucketLedger)
	c := tx.Bucket(bucketLedgerByOrg).Cursor()
	for k, v := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		raw := entries.Get(v)
		if raw == nil {
			continue
		}
		r := gjson.GetManyBytes(raw, "kind", "amount_usd", "call_id")
		if r[0].String() != LedgerCharge || r[2].String() == callID {
			continue
		}
		nanos, err := toNanos(r[1].Float())
		if err != nil {
			continue
		}
		sum -= nanos // a charge's amount is negative
		if enough(sum) {
			return true
		}
	}
	return false
}

// sumRefundsSince counts the entries of a refund index under prefix made at
// or after since, and adds up their amounts.
func sumRefundsSince(b, charges *bolt.Bucket, prefix []byte, since time.Time) (n int, nanos int64) {
	start := append(bytes.Clone(prefix), sortPosition(since, "")...)
	c := b.Cursor()
	for k, v := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		n++
		nanos += refundedNanos(v, charges)
	}
	return n, nanos
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
