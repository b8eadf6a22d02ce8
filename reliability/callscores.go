package reliability

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CallScores is what the asynchronous eval pass found for one served call:
// a score per ship gate of the call's operation, and whether the call was
// refunded for failing one.
type CallScores struct {
	// CallID is the call scored.
	CallID string `json:"call_id"`
	// OrgID is the org of the call.
	OrgID string `json:"org_id"`
	// OperationID is the operation whose gates scored the call.
	OperationID string `json:"operation_id"`
	// Provider is the upstream that served the call.
	Provider string `json:"provider"`
	// UpstreamModel is the upstream model that served the call.
	UpstreamModel string `json:"upstream_model"`
	// Gates has one entry per ship gate, in the operation's order.
	Gates []GateScore `json:"gates"`
	// Passed is true when every gate that could score passed.
	Passed bool `json:"passed"`
	// Refund is what the eval-gated refund did: credited, capped (past the
	// org's eval-gated cap), gate_unreliable (every gate the call failed is
	// flagged unreliable), already_refunded or not_charged; nil when none
	// was asked for (the free plan, or every gate passed).
	Refund *RefundOutcome `json:"refund"`
	// ScoredAt is when the pass finished.
	ScoredAt time.Time `json:"scored_at"`
}

// GateScore is one ship gate's verdict on a call.
type GateScore struct {
	// EvaluatorID is the gate's evaluator.
	EvaluatorID string `json:"evaluator_id"`
	// MinScore is the score the gate asks for.
	MinScore float64 `json:"min_score"`
	// Score is the evaluator's score, or nil when the gate was skipped.
	Score *float64 `json:"score"`
	// Passed is true when Score reaches MinScore.
	Passed bool `json:"passed"`
	// Details say how the score came about.
	Details json.RawMessage `json:"details,omitempty"`
	// Skipped says why the gate did not score the call: no golden item
	// with the call's prompt to compare with, an unscorable output, a
	// failed model call.
	Skipped string `json:"skipped,omitempty"`
	// Unreliable is true when the gate was flagged unreliable (GateHealth)
	// as of this call: its failure makes no refund.
	Unreliable bool `json:"unreliable,omitempty"`
}

// CallEvalPass is the eval pass's verdict as a call shows it (Call's
// EvalPass): the CallScores without the fields the call carries itself.
type CallEvalPass struct {
	// Passed is true when every gate that could score passed.
	Passed bool `json:"passed"`
	// Gates has one entry per ship gate, in the operation's order.
	Gates []GateScore `json:"gates"`
	// Refund is what the eval-gated refund did, or nil; see CallScores.
	Refund *RefundOutcome `json:"refund"`
	// ScoredAt is when the pass finished.
	ScoredAt time.Time `json:"scored_at"`
}

// attachEvalPass sets c.EvalPass from the eval pass's scores of c in tx,
// or to nil when no pass has scored it.
func attachEvalPass(tx *bolt.Tx, c *Call) error {
	c.EvalPass = nil
	raw := tx.Bucket(bucketCallScores).Get([]byte(c.ID))
	if raw == nil {
		return nil
	}
	var cs CallScores
	if err := json.Unmarshal(raw, &cs); err != nil {
		return fmt.Errorf("decode scores of call %s: %w", c.ID, err)
	}
	c.EvalPass = &CallEvalPass{Passed: cs.Passed, Gates: cs.Gates, Refund: cs.Refund, ScoredAt: cs.ScoredAt}
	return nil
}

// CallScores returns the eval pass's scores of the call, or ErrNotFound
// when no pass has scored it.
func (s *BoltStore) CallScores(callID string) (CallScores, error) {
	var cs CallScores
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketCallScores), []byte(callID), &cs)
	})
	if err != nil {
		return CallScores{}, fmt.Errorf("scores of call %s: %w", callID, err)
	}
	return cs, nil
}
