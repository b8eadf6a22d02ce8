package reliability

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
)

// GateHealth is what the eval pass has seen of one ship gate (an operation
// and an evaluator): its verdicts on the last GateHealthWindow calls it
// scored, on every path that served the operation, the reference model's
// included, and whether that record flagged it unreliable.
//
// The rule (EvalGateLimits): a gate with at least MinScored scored calls in
// its window that failed at least MaxFailShare of them is flagged. A gate
// that fails nearly every call, whichever model served it, measures the
// evaluator rather than the model (a pattern that can never match, a
// minimum score no answer reaches); refunding on it would make every call
// free. A flagged gate keeps scoring, but a call that fails only flagged
// gates is not refunded (RefundGateUnreliable) until an operator clears the
// flag (ClearGateHealth), which also starts the window afresh.
type GateHealth struct {
	// OperationID is the gate's operation.
	OperationID string `json:"operation_id"`
	// EvaluatorID is the gate's evaluator.
	EvaluatorID string `json:"evaluator_id"`
	// OrgID is the org of the operation.
	OrgID string `json:"org_id"`
	// Scored is how many scored calls the window holds, at most
	// GateHealthWindow.
	Scored int `json:"scored"`
	// Failed is how many of them failed the gate.
	Failed int `json:"failed"`
	// History holds the window's verdicts, one bit each, the latest in
	// bit 0; a set bit is a failure.
	History uint64 `json:"history"`
	// Unreliable is true once the rule flagged the gate, until an operator
	// clears it.
	Unreliable bool `json:"unreliable"`
	// FlaggedAt is when the gate was last flagged, or nil.
	FlaggedAt *time.Time `json:"flagged_at"`
	// ClearedAt is when an operator last cleared the gate, or nil.
	ClearedAt *time.Time `json:"cleared_at"`
	// UpdatedAt is when the record last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// gateHealthKey is the key of a gate's GateHealth.
func gateHealthKey(operationID, evaluatorID string) []byte {
	return indexPrefix(operationID, evaluatorID)
}

// windowMask keeps the bits of History inside the window.
const windowMask = uint64(1)<<GateHealthWindow - 1

// recordGateVerdict adds one scored call's verdict on a gate to its
// GateHealth within tx, and flags the gate when the rule of lim says so.
func recordGateVerdict(tx *bolt.Tx, orgID, operationID, evaluatorID string, failed bool, at time.Time, lim EvalGateLimits) (GateHealth, error) {
	b := tx.Bucket(bucketGateHealth)
	key := gateHealthKey(operationID, evaluatorID)
	h := GateHealth{OperationID: operationID, EvaluatorID: evaluatorID, OrgID: orgID}
	if err := getJSON(b, key, &h); err != nil && !errors.Is(err, ErrNotFound) {
		return GateHealth{}, err
	}
	h.History <<= 1
	if failed {
		h.History |= 1
	}
	h.History &= windowMask
	h.Scored = min(h.Scored+1, GateHealthWindow)
	h.Failed = bits.OnesCount64(h.History)
	h.UpdatedAt = at.UTC()
	if !h.Unreliable && h.Scored >= lim.MinScored && float64(h.Failed) >= lim.MaxFailShare*float64(h.Scored) {
		h.Unreliable = true
		flagged := at.UTC()
		h.FlaggedAt = &flagged
	}
	if err := putJSON(b, key, h); err != nil {
		return GateHealth{}, fmt.Errorf("store health of gate %s of operation %s: %w", evaluatorID, operationID, err)
	}
	return h, nil
}

// GateHealth returns the health record of the gate of the operation with
// this evaluator, or ErrNotFound when the eval pass has not scored a call
// with it.
func (s *BoltStore) GateHealth(operationID, evaluatorID string) (GateHealth, error) {
	var h GateHealth
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketGateHealth), gateHealthKey(operationID, evaluatorID), &h)
	})
	if err != nil {
		return GateHealth{}, fmt.Errorf("health of gate %s of operation %s: %w", evaluatorID, operationID, err)
	}
	return h, nil
}

// ClearGateHealth is the operator's explicit clearing of a gate flagged
// unreliable: the flag goes, and the window of verdicts starts afresh, so
// that the gate is judged again on the calls it scores from now on. It
// returns the cleared record, or ErrNotFound when the gate has none.
// Clearing a gate that is not flagged only restarts its window.
func (s *BoltStore) ClearGateHealth(operationID, evaluatorID string, at time.Time) (GateHealth, error) {
	var h GateHealth
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketGateHealth)
		key := gateHealthKey(operationID, evaluatorID)
		if err := getJSON(b, key, &h); err != nil {
			return err
		}
		cleared := at.UTC()
		h.Unreliable, h.History, h.Scored, h.Failed = false, 0, 0, 0
		h.ClearedAt, h.UpdatedAt = &cleared, cleared
		return putJSON(b, key, h)
	})
	if err != nil {
		return GateHealth{}, fmt.Errorf("clear gate %s of operation %s: %w", evaluatorID, operationID, err)
	}
	return h, nil
}

// markUnreliableGates sets Unreliable on each of op's ship gates from the
// gates' health records in tx; it is never stored with the operation. The
// gates are copied first: the caller's slice is left as it was.
func markUnreliableGates(tx *bolt.Tx, op *Operation) {
	b := tx.Bucket(bucketGateHealth)
	op.ShipGates = slices.Clone(op.ShipGates)
	for i := range op.ShipGates {
		g := &op.ShipGates[i]
		raw := b.Get(gateHealthKey(op.ID, g.EvaluatorID))
		g.Unreliable = raw != nil && gjson.GetBytes(raw, "unreliable").Bool()
	}
}

// commitEvalPass stores what the eval pass found for a call, in one
// transaction: each scored gate's verdict in its GateHealth (once per call,
// however often the call is scored), then, on the paid plan (paid) for a
// call that failed a gate, the eval-gated refund within fair's caps, then
// the scores. A call that failed only gates flagged unreliable is not
// refunded: its refund outcome is RefundGateUnreliable. The gates' flags
// and the refund outcome are set on cs.
func (s *BoltStore) commitEvalPass(cs *CallScores, paid bool, fair FairUse, at time.Time) error {
	lim := fair.withDefaults().EvalGate
	err := s.db.Update(func(tx *bolt.Tx) error {
		scores := tx.Bucket(bucketCallScores)
		first := scores.Get([]byte(cs.CallID)) == nil
		failsReliable := false
		for i := range cs.Gates {
			g := &cs.Gates[i]
			if g.Score == nil {
				continue
			}
			var h GateHealth
			if first {
				var err error
				if h, err = recordGateVerdict(tx, cs.OrgID, cs.OperationID, g.EvaluatorID, !g.Passed, at, lim); err != nil {
					return err
				}
			} else if err := getJSON(tx.Bucket(bucketGateHealth), gateHealthKey(cs.OperationID, g.EvaluatorID), &h); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			g.Unreliable = h.Unreliable
			if !g.Passed && !h.Unreliable {
				failsReliable = true
			}
		}
		cs.Refund = nil
		if !cs.Passed && paid {
			switch {
			case failsReliable:
				out, err := refundInTx(tx, cs.OrgID, cs.CallID, RefundReasonEvalGate, at, &fair)
				if err != nil {
					return err
				}
				cs.Refund = &out
			case tx.Bucket(bucketCallRefunds).Get([]byte(cs.CallID)) != nil:
				cs.Refund = &RefundOutcome{Status: RefundAlreadyRefunded}
			default:
				cs.Refund = &RefundOutcome{Status: RefundGateUnreliable}
			}
		}
		return putJSON(scores, []byte(cs.CallID), cs)
	})
	if err != nil {
		return fmt.Errorf("store eval pass of call %s: %w", cs.CallID, err)
	}
	if cs.Refund != nil {
		s.noteRefund(RefundReasonEvalGate, *cs.Refund)
	}
	return nil
}
