package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Object tags of evaluations and their results (SPEC 2.13).
const (
	// ObjectEvaluation is the object tag of an Evaluation.
	ObjectEvaluation = "evaluation"
	// ObjectEvaluationResult is the object tag of an EvaluationResult.
	ObjectEvaluationResult = "evaluation_result"
)

// Evaluation states (SPEC section 3): pending -> running -> done, or
// failed from either of the first two.
const (
	// EvaluationPending is an evaluation waiting for the worker.
	EvaluationPending = "pending"
	// EvaluationRunning is an evaluation the worker is scoring; its
	// results so far are visible.
	EvaluationRunning = "running"
	// EvaluationDone is a finished evaluation with its summary scores.
	EvaluationDone = "done"
	// EvaluationFailed is an evaluation that stopped; Error says why.
	EvaluationFailed = "failed"
)

// Evaluation scores every item of one version of a dataset with one or
// more evaluators (SPEC 2.13).
type Evaluation struct {
	// ID is the evaluation's id, prefix "eval_".
	ID string `json:"id"`
	// Object is always "evaluation".
	Object string `json:"object"`
	// OrgID is the org that owns the evaluation.
	OrgID string `json:"org_id"`
	// DatasetID is the dataset evaluated.
	DatasetID string `json:"dataset_id"`
	// DatasetVersion is the dataset's version when the evaluation was
	// created: the items it scores, and the version promotion compares
	// with the dataset's current one.
	DatasetVersion int `json:"dataset_version"`
	// EvaluatorIDs are the evaluators that score each item.
	EvaluatorIDs []string `json:"evaluator_ids"`
	// ModelVersion is the model each item's input is sent to, whose reply
	// is scored; empty to score each item's expected output itself.
	ModelVersion string `json:"model_version"`
	// Status is one of the Evaluation state constants.
	Status string `json:"status"`
	// SummaryScores maps each evaluator id to the mean of its scores
	// weighted by item weight; nil until done.
	SummaryScores map[string]float64 `json:"summary_scores"`
	// StartedAt is when the worker started scoring, or nil.
	StartedAt *time.Time `json:"started_at"`
	// CompletedAt is when the evaluation finished or failed, or nil.
	CompletedAt *time.Time `json:"completed_at"`
	// Error says why a failed evaluation failed; nil otherwise.
	Error *string `json:"error"`
	// CreatedAt is when the evaluation was created; lists are ordered by it.
	CreatedAt time.Time `json:"created_at"`
	// Progress says how far the run has got: the items scored by every
	// evaluator so far, of the items the evaluation scores. Absent on
	// evaluations stored before progress was kept.
	Progress *EvaluationProgress `json:"progress,omitempty"`
}

// EvaluationProgress counts the items of an evaluation.
type EvaluationProgress struct {
	// ItemsDone is how many items every evaluator has scored.
	ItemsDone int `json:"items_done"`
	// ItemsTotal is how many items the evaluation scores: the dataset's
	// items up to the evaluated version.
	ItemsTotal int `json:"items_total"`
}

// itemCount is how many items the dataset has: all of them belong to its
// current version or an earlier one.
func itemCount(tx *bolt.Tx, datasetID string) int {
	prefix := indexPrefix(datasetID)
	c := tx.Bucket(bucketItemsByDataset).Cursor()
	n := 0
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}

// EvaluationResult is one evaluator's score of one item (SPEC 2.13).
type EvaluationResult struct {
	// ID is the result's id, prefix "evres_".
	ID string `json:"id"`
	// Object is always "evaluation_result".
	Object string `json:"object"`
	// EvaluationID is the evaluation the result belongs to.
	EvaluationID string `json:"evaluation_id"`
	// DatasetItemID is the item scored.
	DatasetItemID string `json:"dataset_item_id"`
	// EvaluatorID is the evaluator that scored.
	EvaluatorID string `json:"evaluator_id"`
	// Score is 0 to 1; 0 for an item that could not be scored.
	Score float64 `json:"score"`
	// Details say how the score came about; for an item that could not be
	// scored, "error" says why.
	Details json.RawMessage `json:"details,omitempty"`
}

// CreateEvaluation stores e as a new pending evaluation of the dataset's
// current version and wakes the evaluation workers. It assigns ID, Object,
// DatasetVersion, Status, and CreatedAt when zero, and clears the fields the
// run fills in. The dataset must exist (ErrNotFound) in e.OrgID
// (ErrForbidden) and have items; each evaluator must be one of the org's (a
// ValidationError naming evaluator_ids[i]).
func (s *BoltStore) CreateEvaluation(e *Evaluation) error {
	if e == nil {
		return errors.New("create evaluation: evaluation is nil")
	}
	created := *e
	created.ID = NewID("eval_")
	created.Object = ObjectEvaluation
	created.Status = EvaluationPending
	created.SummaryScores, created.StartedAt, created.CompletedAt, created.Error, created.Progress = nil, nil, nil, nil, nil
	created.EvaluatorIDs = append([]string{}, e.EvaluatorIDs...)
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	err := s.db.Update(func(tx *bolt.Tx) error {
		var ds Dataset
		if err := getJSON(tx.Bucket(bucketDatasets), []byte(created.DatasetID), &ds); err != nil {
			return fmt.Errorf("dataset %s: %w", created.DatasetID, err)
		}
		if ds.OrgID != created.OrgID {
			return fmt.Errorf("dataset %s: %w", created.DatasetID, ErrForbidden)
		}
		if len(created.EvaluatorIDs) == 0 {
			return invalid("evaluator_ids", "must have at least 1 item")
		}
		evaluators := tx.Bucket(bucketEvaluators)
		for i, id := range created.EvaluatorIDs {
			var ev Evaluator
			err := getJSON(evaluators, []byte(id), &ev)
			if errors.Is(err, ErrNotFound) || (err == nil && ev.OrgID != created.OrgID) {
				return invalid(fmt.Sprintf("evaluator_ids[%d]", i), "no evaluator with id %q in this organisation", id)
			}
			if err != nil {
				return err
			}
		}
		if !hasItems(tx, ds.ID) {
			return &ValidationError{Param: "dataset_id", Code: CodeDatasetEmpty,
				Message: fmt.Sprintf("dataset %s has no items to evaluate", ds.ID)}
		}
		created.DatasetVersion = ds.Version
		created.Progress = &EvaluationProgress{ItemsTotal: itemCount(tx, ds.ID)}
		if err := putJSON(tx.Bucket(bucketEvaluations), []byte(created.ID), created); err != nil {
			return err
		}
		if err := putIndex(tx.Bucket(bucketEvaluationsByOrg), indexPrefix(created.OrgID), created.CreatedAt, created.ID); err != nil {
			return err
		}
		if err := putIndex(tx.Bucket(bucketEvaluationsByDataset), indexPrefix(created.DatasetID), created.CreatedAt, created.ID); err != nil {
			return err
		}
		return tx.Bucket(bucketEvaluationsOpen).Put([]byte(created.ID), []byte(created.ID))
	})
	if err != nil {
		return fmt.Errorf("create evaluation in org %s: %w", e.OrgID, err)
	}
	s.evalReady.notify()
	*e = created
	return nil
}

// Evaluation returns the evaluation with this id.
func (s *BoltStore) Evaluation(id string) (Evaluation, error) {
	var e Evaluation
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketEvaluations), []byte(id), &e)
	})
	if err != nil {
		return Evaluation{}, fmt.Errorf("evaluation %s: %w", id, err)
	}
	return e, nil
}

// ListEvaluations lists the org's evaluations newest first.
func (s *BoltStore) ListEvaluations(orgID string, p PageQuery) (Page[Evaluation], error) {
	page, err := listIndexed[Evaluation](s, bucketEvaluationsByOrg, bucketEvaluations, indexPrefix(orgID), p)
	if err != nil {
		return Page[Evaluation]{}, fmt.Errorf("list evaluations of org %s: %w", orgID, err)
	}
	return page, nil
}

// EvaluationResults returns the results stored so far for the evaluation,
// by item in dataset order, then by evaluator id.
func (s *BoltStore) EvaluationResults(id string) ([]EvaluationResult, error) {
	var out []EvaluationResult
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = resultsOf(tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("results of evaluation %s: %w", id, err)
	}
	return out, nil
}

// resultsOf reads an evaluation's results; never nil.
func resultsOf(tx *bolt.Tx, evaluationID string) ([]EvaluationResult, error) {
	out := []EvaluationResult{}
	prefix := indexPrefix(evaluationID)
	c := tx.Bucket(bucketEvaluationResults).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var r EvaluationResult
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("decode result %q: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// resultKey is where the result of one evaluator on one item is kept: one
// key per pair, so a resumed run cannot store a pair twice.
func resultKey(evaluationID, itemID, evaluatorID string) []byte {
	return indexPrefix(evaluationID, itemID, evaluatorID)
}

// StartEvaluation moves a pending evaluation to running, setting
// StartedAt to at. A running one is returned as it is, so a run that was
// interrupted can resume; a finished one is ErrConflict.
func (s *BoltStore) StartEvaluation(id string, at time.Time) (Evaluation, error) {
	e, err := s.changeEvaluation(id, func(e *Evaluation) error {
		switch e.Status {
		case EvaluationPending:
			started := at.UTC()
			e.Status, e.StartedAt = EvaluationRunning, &started
		case EvaluationRunning:
		default:
			return fmt.Errorf("evaluation is %s: %w", e.Status, ErrConflict)
		}
		return nil
	})
	if err != nil {
		return Evaluation{}, fmt.Errorf("start evaluation %s: %w", id, err)
	}
	return e, nil
}

// AddEvaluationResults stores results of a running evaluation, assigning
// their ID, Object and EvaluationID. A pair of item and evaluator that has a
// result already keeps it.
func (s *BoltStore) AddEvaluationResults(id string, results []EvaluationResult) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		var e Evaluation
		if err := getJSON(tx.Bucket(bucketEvaluations), []byte(id), &e); err != nil {
			return err
		}
		if e.Status != EvaluationRunning {
			return fmt.Errorf("evaluation is %s, not running: %w", e.Status, ErrConflict)
		}
		b := tx.Bucket(bucketEvaluationResults)
		// The items that got their first result here: an item's results
		// are added together, so these are the items now done.
		var scored []string
		for _, r := range results {
			key := resultKey(id, r.DatasetItemID, r.EvaluatorID)
			if b.Get(key) != nil {
				continue
			}
			r.ID = NewID("evres_")
			r.Object = ObjectEvaluationResult
			r.EvaluationID = id
			if err := putJSON(b, key, r); err != nil {
				return err
			}
			if !slices.Contains(scored, r.DatasetItemID) {
				scored = append(scored, r.DatasetItemID)
			}
		}
		if e.Progress == nil || len(scored) == 0 {
			return nil
		}
		e.Progress.ItemsDone = min(e.Progress.ItemsDone+len(scored), e.Progress.ItemsTotal)
		return putJSON(tx.Bucket(bucketEvaluations), []byte(id), e)
	})
	if err != nil {
		return fmt.Errorf("add results to evaluation %s: %w", id, err)
	}
	return nil
}

// FinishEvaluation marks a running evaluation done at time at, with
// summary scores computed from its stored results in the same transaction:
// for each evaluator, the mean of its item scores weighted by item weight
// (the plain mean when every weight is 0). Every item of the evaluated
// version needs a result from every evaluator, or it is ErrConflict.
func (s *BoltStore) FinishEvaluation(id string, at time.Time) (Evaluation, error) {
	var e Evaluation
	err := s.db.Update(func(tx *bolt.Tx) error {
		evaluations := tx.Bucket(bucketEvaluations)
		if err := getJSON(evaluations, []byte(id), &e); err != nil {
			return err
		}
		if e.Status != EvaluationRunning {
			return fmt.Errorf("evaluation is %s, not running: %w", e.Status, ErrConflict)
		}
		items, err := itemsUpTo(tx, e.DatasetID, e.DatasetVersion)
		if err != nil {
			return err
		}
		summary, err := summarize(tx, e, items)
		if err != nil {
			return err
		}
		done := at.UTC()
		e.Status, e.SummaryScores, e.CompletedAt = EvaluationDone, summary, &done
		if err := putJSON(evaluations, []byte(id), e); err != nil {
			return err
		}
		return tx.Bucket(bucketEvaluationsOpen).Delete([]byte(id))
	})
	if err != nil {
		return Evaluation{}, fmt.Errorf("finish evaluation %s: %w", id, err)
	}
	return e, nil
}

// summarize computes the weighted mean score of each evaluator.
func summarize(tx *bolt.Tx, e Evaluation, items []DatasetItem) (map[string]float64, error) {
	results := tx.Bucket(bucketEvaluationResults)
	summary := make(map[string]float64, len(e.EvaluatorIDs))
	for _, evID := range e.EvaluatorIDs {
		var weighted, weights, plain float64
		for _, it := range items {
			var r EvaluationResult
			err := getJSON(results, resultKey(e.ID, it.ID, evID), &r)
			if errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("item %s has no result from evaluator %s: %w", it.ID, evID, ErrConflict)
			}
			if err != nil {
				return nil, err
			}
			weighted += it.Weight * r.Score
			weights += it.Weight
			plain += r.Score
		}
		switch {
		case weights > 0:
			summary[evID] = weighted / weights
		case len(items) > 0:
			summary[evID] = plain / float64(len(items))
		default:
			summary[evID] = 0
		}
	}
	return summary, nil
}

// FailEvaluation marks a pending or running evaluation failed at time at
// with reason. The results stored so far stay, to show how far it got.
func (s *BoltStore) FailEvaluation(id, reason string, at time.Time) (Evaluation, error) {
	e, err := s.changeEvaluation(id, func(e *Evaluation) error {
		if e.Status != EvaluationPending && e.Status != EvaluationRunning {
			return fmt.Errorf("evaluation is %s: %w", e.Status, ErrConflict)
		}
		failed := at.UTC()
		e.Status, e.Error, e.CompletedAt = EvaluationFailed, &reason, &failed
		return nil
	})
	if err != nil {
		return Evaluation{}, fmt.Errorf("fail evaluation %s: %w", id, err)
	}
	return e, nil
}

// changeEvaluation applies change to the stored evaluation in one
// transaction, and keeps the open index in step with its status.
func (s *BoltStore) changeEvaluation(id string, change func(*Evaluation) error) (Evaluation, error) {
	var e Evaluation
	err := s.db.Update(func(tx *bolt.Tx) error {
		evaluations := tx.Bucket(bucketEvaluations)
		if err := getJSON(evaluations, []byte(id), &e); err != nil {
			return err
		}
		if err := change(&e); err != nil {
			return err
		}
		if err := putJSON(evaluations, []byte(id), e); err != nil {
			return err
		}
		if e.Status == EvaluationDone || e.Status == EvaluationFailed {
			return tx.Bucket(bucketEvaluationsOpen).Delete([]byte(id))
		}
		return nil
	})
	return e, err
}

// openEvaluations lists the pending and running evaluations, oldest first.
func (s *BoltStore) openEvaluations() ([]string, error) {
	var ids []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvaluationsOpen).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list open evaluations: %w", err)
	}
	return ids, nil
}

// evaluationInputs reads what a run needs in one transaction: the items of
// the evaluated version and the evaluators, in the evaluation's order.
func (s *BoltStore) evaluationInputs(e Evaluation) ([]DatasetItem, []Evaluator, error) {
	var (
		items      []DatasetItem
		evaluators []Evaluator
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if items, err = itemsUpTo(tx, e.DatasetID, e.DatasetVersion); err != nil {
			return err
		}
		b := tx.Bucket(bucketEvaluators)
		for _, id := range e.EvaluatorIDs {
			var ev Evaluator
			if err := getJSON(b, []byte(id), &ev); err != nil {
				return fmt.Errorf("evaluator %s: %w", id, err)
			}
			evaluators = append(evaluators, ev)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read inputs of evaluation %s: %w", e.ID, err)
	}
	return items, evaluators, nil
}

// scoredPairs returns the item and evaluator pairs of the evaluation that
// have a result, keyed by resultKey.
func (s *BoltStore) scoredPairs(id string) (map[string]bool, error) {
	done := map[string]bool{}
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := indexPrefix(id)
		c := tx.Bucket(bucketEvaluationResults).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			done[string(k)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read results of evaluation %s: %w", id, err)
	}
	return done, nil
}
