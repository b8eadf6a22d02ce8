package reliability

import (
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FailedGate is a ship gate that kept a dataset from promotion (SPEC
// section 7, failed_gates).
type FailedGate struct {
	// EvaluatorID is the gate's evaluator.
	EvaluatorID string `json:"evaluator_id"`
	// MinScore is the score the gate asks for.
	MinScore float64 `json:"min_score"`
	// ActualScore is the evaluation's summary score of the evaluator, or
	// nil when there is no evaluation or it did not use that evaluator.
	ActualScore *float64 `json:"actual_score"`
}

// ShipGatesUnmetError is a promotion refused because ship gates failed.
type ShipGatesUnmetError struct {
	// DatasetID is the dataset that stays a draft.
	DatasetID string
	// EvaluationID is the evaluation judged; empty when there was none.
	EvaluationID string
	// FailedGates lists every gate that failed, in the operation's order.
	FailedGates []FailedGate
}

// Error lists the failed gates.
func (e *ShipGatesUnmetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dataset %s cannot be promoted: ", e.DatasetID)
	if e.EvaluationID == "" {
		b.WriteString("no done evaluation of its current version, so ")
	}
	for i, g := range e.FailedGates {
		if i > 0 {
			b.WriteString(", ")
		}
		if g.ActualScore == nil {
			fmt.Fprintf(&b, "evaluator %s has no score (needs %g)", g.EvaluatorID, g.MinScore)
		} else {
			fmt.Fprintf(&b, "evaluator %s scored %g (needs %g)", g.EvaluatorID, *g.ActualScore, g.MinScore)
		}
	}
	return b.String()
}

// Promotion is the result of a successful promotion (SPEC
// PromoteResponse).
type Promotion struct {
	// Dataset is the dataset, golden.
	Dataset Dataset `json:"dataset"`
	// EvaluationID is the evaluation the gates were judged on; empty when
	// the operation has no gates and the dataset has no done evaluation.
	EvaluationID string `json:"evaluation_id,omitempty"`
}

// PromoteDataset makes a draft dataset golden at time at if every ship gate
// of its operation passes on the latest done evaluation of the dataset's
// current version: the evaluation's summary score for the gate's evaluator
// must reach the gate's min_score. A gate whose evaluator the evaluation
// did not use fails with no score, as does every gate when there is no
// such evaluation; an operation without gates promotes. The judgement and
// the change share one transaction. Failed gates are a
// *ShipGatesUnmetError. A golden dataset is returned as it is.
func (s *BoltStore) PromoteDataset(id string, at time.Time) (Promotion, error) {
	var p Promotion
	err := s.db.Update(func(tx *bolt.Tx) error {
		datasets := tx.Bucket(bucketDatasets)
		ds := &p.Dataset
		if err := getJSON(datasets, []byte(id), ds); err != nil {
			return err
		}
		if ds.Status == DatasetGolden {
			return nil
		}
		var op Operation
		if err := getJSON(tx.Bucket(bucketOperations), []byte(ds.OperationID), &op); err != nil {
			return fmt.Errorf("operation %s of the dataset: %w", ds.OperationID, err)
		}
		eval, found, err := latestDoneEvaluation(tx, ds.ID, ds.Version)
		if err != nil {
			return err
		}
		if found {
			p.EvaluationID = eval.ID
		}
		var failed []FailedGate
		for _, g := range op.ShipGates {
			score, ok := eval.SummaryScores[g.EvaluatorID]
			if !ok {
				failed = append(failed, FailedGate{EvaluatorID: g.EvaluatorID, MinScore: g.MinScore})
				continue
			}
			if score < g.MinScore {
				failed = append(failed, FailedGate{EvaluatorID: g.EvaluatorID, MinScore: g.MinScore, ActualScore: &score})
			}
		}
		if len(failed) > 0 {
			return &ShipGatesUnmetError{DatasetID: ds.ID, EvaluationID: p.EvaluationID, FailedGates: failed}
		}
		promoted := at.UTC()
		ds.Status, ds.PromotedAt = DatasetGolden, &promoted
		return putJSON(datasets, []byte(ds.ID), *ds)
	})
	if err != nil {
		return Promotion{}, fmt.Errorf("promote dataset %s: %w", id, err)
	}
	return p, nil
}

// latestDoneEvaluation finds the newest done evaluation of the dataset at
// version.
func latestDoneEvaluation(tx *bolt.Tx, datasetID string, version int) (Evaluation, bool, error) {
	evaluations := tx.Bucket(bucketEvaluations)
	var found Evaluation
	ok := false
	err := newestFirst(tx.Bucket(bucketEvaluationsByDataset), indexPrefix(datasetID), func(id []byte) (bool, error) {
		var e Evaluation
		if err := getJSON(evaluations, id, &e); err != nil {
			return false, fmt.Errorf("evaluation %s: %w", id, err)
		}
		if e.Status == EvaluationDone && e.DatasetVersion == version {
			found, ok = e, true
			return false, nil
		}
		return true, nil
	})
	return found, ok, err
}
