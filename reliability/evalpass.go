package reliability

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// ScheduleEvalPass queues the asynchronous eval pass of a served call
// (SPEC 6.3) and returns at once, so it never slows the response. A call
// with no operation, a failed call, or an embeddings call has nothing to
// score and is not queued. When the queue is full, or the worker has
// stopped, the call is dropped and the drop logged: the pass is a check,
// and the call path must not wait for it.
//
// The pass scores the call's assistant text with the evaluator of each
// ship gate of its operation. regex, json_schema and llm_judge need no
// reference; embedding_match compares with the expected output of a
// golden dataset item of the operation taken from a call with the same
// prompt fingerprint, and skips the gate when there is none. The scores
// are stored (CallScores) and handed to OnEvidence; on the paid plan, a
// call that scores under any gate's min_score is refunded, at most once,
// within the eval-gated caps of WorkerOptions.FairUse (RefundCapped past
// them) and unless every gate it failed is flagged unreliable
// (RefundGateUnreliable; see GateHealth).
func (w *Worker) ScheduleEvalPass(call Call) {
	if call.OperationID == nil || *call.OperationID == "" || call.Status == CallFailed || call.Endpoint == EndpointEmbeddings {
		return
	}
	if w.state.Load() == workerStopped {
		w.log("eval pass of call "+call.ID+" dropped", errors.New("the worker has stopped"))
		return
	}
	select {
	case w.queue <- call:
	default:
		w.log("eval pass of call "+call.ID+" dropped", fmt.Errorf("the queue of %d calls is full", cap(w.queue)))
	}
}

// runEvalPasses scores queued calls until the worker stops.
func (w *Worker) runEvalPasses(ctx context.Context) {
	defer w.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case call := <-w.queue:
			if err := w.evalPass(ctx, call); err != nil && ctx.Err() == nil {
				w.log("eval pass of call "+call.ID+" failed", err)
			}
		}
	}
}

// evalPass scores one call against its operation's gates.
func (w *Worker) evalPass(ctx context.Context, call Call) error {
	op, err := w.store.ResolveOperation(call.OrgID, *call.OperationID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(op.ShipGates) == 0 {
		return nil
	}
	output, _ := assistantText(call.ResponsePayload)
	in := ScoreInput{Input: call.RequestPayload, Output: jsonString(output)}
	fingerprint := gjson.GetBytes(call.Delivery, "fingerprints.prompt").String()

	cs := CallScores{
		CallID:        call.ID,
		OrgID:         call.OrgID,
		OperationID:   op.ID,
		Provider:      call.Provider,
		UpstreamModel: call.ModelVersion,
		Gates:         make([]GateScore, 0, len(op.ShipGates)),
		Passed:        true,
	}
	for _, g := range op.ShipGates {
		gs, err := w.scoreGate(ctx, call, op, g, in, fingerprint)
		if err != nil {
			return err
		}
		if gs.Score != nil {
			if !gs.Passed {
				cs.Passed = false
			}
			if w.opts.OnEvidence != nil {
				w.opts.OnEvidence(GateEvidence{OrgID: call.OrgID, OperationID: op.ID, OperationKey: op.Key, PathKey: call.PathKey, Provider: call.Provider,
					PromptFingerprint: fingerprint, EvaluatorID: g.EvaluatorID, Score: *gs.Score, Passed: gs.Passed})
			}
		}
		cs.Gates = append(cs.Gates, gs)
	}
	if w.opts.OnScored != nil {
		score := 0.0
		if cs.Passed {
			score = 1
		}
		w.opts.OnScored(GateEvidence{OrgID: call.OrgID, OperationID: op.ID, OperationKey: op.Key, PathKey: call.PathKey, Provider: call.Provider,
			PromptFingerprint: fingerprint, Score: score, Passed: cs.Passed})
	}
	paid := false
	if !cs.Passed {
		// The call and its charge reach the disk through the group-commit
		// writer; a refund needs them there.
		if err := w.store.Sync(); err != nil {
			return err
		}
		plan, err := w.planOf(call.OrgID)
		if err != nil {
			return err
		}
		paid = plan == PlanPaid
	}
	cs.ScoredAt = w.opts.Now().UTC()
	return w.store.commitEvalPass(&cs, paid, w.opts.FairUse, cs.ScoredAt)
}

// scoreGate scores the call with one gate's evaluator. A gate that cannot
// score the call is returned skipped, with the reason; the error is a
// store failure or a stop.
func (w *Worker) scoreGate(ctx context.Context, call Call, op Operation, g ShipGate, in ScoreInput, fingerprint string) (GateScore, error) {
	gs := GateScore{EvaluatorID: g.EvaluatorID, MinScore: g.MinScore}
	ev, err := w.store.Evaluator(g.EvaluatorID)
	if errors.Is(err, ErrNotFound) || (err == nil && ev.OrgID != call.OrgID) {
		gs.Skipped = "the gate's evaluator is not one of the organisation's"
		return gs, nil
	}
	if err != nil {
		return gs, err
	}
	if ev.Kind == KindEmbeddingMatch {
		if fingerprint == "" {
			gs.Skipped = "the call has no prompt fingerprint to find a reference by"
			return gs, nil
		}
		item, found, err := w.store.goldenItemForPrompt(call.OrgID, op.ID, fingerprint)
		if err != nil {
			return gs, err
		}
		if !found {
			gs.Skipped = "no golden dataset item of the operation has this call's prompt"
			return gs, nil
		}
		in.ExpectedOutput = item.ExpectedOutput
	}
	score, details, err := Score(ctx, w.models, ev, call.OrgID, in)
	if err != nil {
		if ctx.Err() != nil {
			return gs, ctx.Err()
		}
		gs.Skipped = clip(err.Error())
		return gs, nil
	}
	gs.Score, gs.Passed, gs.Details = &score, score >= g.MinScore, details
	return gs, nil
}

// planOf is the org's plan, from PlanOf or the store.
func (w *Worker) planOf(orgID string) (string, error) {
	if w.opts.PlanOf != nil {
		return w.opts.PlanOf(orgID), nil
	}
	org, err := w.store.Org(orgID)
	if err != nil {
		return "", err
	}
	return org.Plan, nil
}
