package reliability

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEvaluationStoreLifecycle(t *testing.T) {
	f := newFixture(t)
	ev := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	ds := f.dataset(t, item(`"a"`, `"yes"`, 3), item(`"b"`, `"no"`, 1))
	e := Evaluation{OrgID: f.org.ID, DatasetID: ds.ID, EvaluatorIDs: []string{ev.ID}}
	if err := f.s.CreateEvaluation(&e); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.ID, "eval_") || e.Object != ObjectEvaluation || e.Status != EvaluationPending ||
		e.DatasetVersion != 2 || e.SummaryScores != nil || e.StartedAt != nil || e.CompletedAt != nil || e.Error != nil {
		t.Fatalf("created %+v", e)
	}
	if open, _ := f.s.openEvaluations(); len(open) != 1 || open[0] != e.ID {
		t.Fatalf("open = %v", open)
	}
	if err := f.s.AddEvaluationResults(e.ID, nil); !errors.Is(err, ErrConflict) {
		t.Fatalf("results of a pending evaluation: %v", err)
	}
	started := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := f.s.StartEvaluation(e.ID, started)
	if err != nil || e.Status != EvaluationRunning || !e.StartedAt.Equal(started) {
		t.Fatalf("started %+v, %v", e, err)
	}
	if again, err := f.s.StartEvaluation(e.ID, started.Add(time.Hour)); err != nil || !again.StartedAt.Equal(started) {
		t.Fatalf("restart moved started_at: %+v, %v", again, err)
	}
	items, _, err := f.s.evaluationInputs(e)
	if err != nil || len(items) != 2 {
		t.Fatalf("inputs = %v, %v", items, err)
	}
	add := func(itemID string, score float64) {
		t.Helper()
		if err := f.s.AddEvaluationResults(e.ID, []EvaluationResult{{DatasetItemID: itemID, EvaluatorID: ev.ID, Score: score}}); err != nil {
			t.Fatal(err)
		}
	}
	add(items[0].ID, 1)
	if _, err := f.s.FinishEvaluation(e.ID, time.Now()); !errors.Is(err, ErrConflict) {
		t.Fatalf("finish with a missing result: %v", err)
	}
	add(items[1].ID, 0)
	add(items[0].ID, 0) // a resumed run repeats a pair: the first result stays
	results, err := f.s.EvaluationResults(e.ID)
	if err != nil || len(results) != 2 || results[0].Score != 1 || results[0].DatasetItemID != items[0].ID ||
		!strings.HasPrefix(results[0].ID, "evres_") || results[0].Object != ObjectEvaluationResult || results[0].EvaluationID != e.ID {
		t.Fatalf("results = %+v, %v", results, err)
	}
	done, err := f.s.FinishEvaluation(e.ID, started.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != EvaluationDone || math.Abs(done.SummaryScores[ev.ID]-0.75) > 1e-12 || done.CompletedAt == nil {
		t.Fatalf("done %+v (want weighted mean 0.75)", done)
	}
	if open, _ := f.s.openEvaluations(); len(open) != 0 {
		t.Fatalf("a done evaluation is still open: %v", open)
	}
	if _, err := f.s.FailEvaluation(e.ID, "late", time.Now()); !errors.Is(err, ErrConflict) {
		t.Fatalf("failing a done evaluation: %v", err)
	}
	if _, err := f.s.StartEvaluation(e.ID, time.Now()); !errors.Is(err, ErrConflict) {
		t.Fatalf("starting a done evaluation: %v", err)
	}
}

func TestEvaluationSummaryWithZeroWeights(t *testing.T) {
	f := newFixture(t)
	ev := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	ds := f.dataset(t, item(`"a"`, `"yes"`, 0), item(`"b"`, `"no"`, 0))
	e := Evaluation{OrgID: f.org.ID, DatasetID: ds.ID, EvaluatorIDs: []string{ev.ID}}
	if err := f.s.CreateEvaluation(&e); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StartEvaluation(e.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	items, _, _ := f.s.evaluationInputs(e)
	_ = f.s.AddEvaluationResults(e.ID, []EvaluationResult{
		{DatasetItemID: items[0].ID, EvaluatorID: ev.ID, Score: 1},
		{DatasetItemID: items[1].ID, EvaluatorID: ev.ID, Score: 0},
	})
	done, err := f.s.FinishEvaluation(e.ID, time.Now())
	if err != nil || done.SummaryScores[ev.ID] != 0.5 {
		t.Fatalf("all-zero weights: %+v, %v; want the plain mean", done.SummaryScores, err)
	}
}

func TestCreateEvaluationRules(t *testing.T) {
	f := newFixture(t)
	ev := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	other, _ := f.s.EnsureOrg("other")
	foreign := Evaluator{OrgID: other.ID, Name: "x", Kind: KindRegex, Config: []byte(`{"pattern":"x"}`)}
	if err := f.s.CreateEvaluator(&foreign); err != nil {
		t.Fatal(err)
	}
	empty := f.dataset(t)
	full := f.dataset(t, item(`"a"`, `"b"`, 1))
	var verr *ValidationError
	tests := []struct {
		e     Evaluation
		param string
		is    error
	}{
		{Evaluation{OrgID: f.org.ID, DatasetID: empty.ID, EvaluatorIDs: []string{ev.ID}}, "dataset_id", nil},
		{Evaluation{OrgID: f.org.ID, DatasetID: full.ID, EvaluatorIDs: []string{ev.ID, "evr_missing"}}, "evaluator_ids[1]", nil},
		{Evaluation{OrgID: f.org.ID, DatasetID: full.ID, EvaluatorIDs: []string{foreign.ID}}, "evaluator_ids[0]", nil},
		{Evaluation{OrgID: f.org.ID, DatasetID: full.ID}, "evaluator_ids", nil},
		{Evaluation{OrgID: f.org.ID, DatasetID: "ds_missing", EvaluatorIDs: []string{ev.ID}}, "", ErrNotFound},
		{Evaluation{OrgID: other.ID, DatasetID: full.ID, EvaluatorIDs: []string{foreign.ID}}, "", ErrForbidden},
	}
	for i, tt := range tests {
		err := f.s.CreateEvaluation(&tt.e)
		switch {
		case tt.is != nil && !errors.Is(err, tt.is):
			t.Errorf("%d: %v, want %v", i, err, tt.is)
		case tt.is == nil && (!errors.As(err, &verr) || verr.Param != tt.param):
			t.Errorf("%d: %v, want a ValidationError of %s", i, err, tt.param)
		}
	}
	if open, _ := f.s.openEvaluations(); len(open) != 0 {
		t.Fatalf("refused evaluations were opened: %v", open)
	}
}

// TestEvaluationReportsProgress: an evaluation counts the items scored by
// every evaluator against its items, from creation (0 of n) through the
// run (one at a time) to done (n of n).
func TestEvaluationReportsProgress(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	judge := f.evaluator(t, KindLLMJudge, `{"model":"judge/a","prompt":"Q: {{input}} A: {{output}}"}`)
	ds := f.dataset(t, item(`"yes 1"`, `""`, 1), item(`"yes 2"`, `""`, 1), item(`"yes 3"`, `""`, 1))
	e := f.createEvaluation(t, ds.ID, "demo/echo", yes.ID, judge.ID)
	if e.Progress == nil || *e.Progress != (EvaluationProgress{ItemsDone: 0, ItemsTotal: 3}) {
		t.Fatalf("progress at creation = %+v, want 0 of 3", e.Progress)
	}
	held := &fakeModels{hold: make(chan struct{})}
	startWorker(t, f.s, held, WorkerOptions{})
	// The first item's model call, then its judge call.
	held.hold <- struct{}{}
	held.hold <- struct{}{}
	var mid Evaluation
	waitFor(t, "one item done", func() bool {
		mid, _ = f.s.Evaluation(e.ID)
		return mid.Progress != nil && mid.Progress.ItemsDone == 1
	})
	if mid.Status != EvaluationRunning {
		t.Fatalf("status with 1 of 3 items done = %s, want running", mid.Status)
	}
	if mid.Progress.ItemsTotal != 3 {
		t.Fatalf("items_total mid-run = %d, want 3", mid.Progress.ItemsTotal)
	}
	close(held.hold)
	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	if *done.Progress != (EvaluationProgress{ItemsDone: 3, ItemsTotal: 3}) {
		t.Fatalf("progress when done = %+v, want 3 of 3", *done.Progress)
	}
	raw, err := json.Marshal(done)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"progress":{"items_done":3,"items_total":3}`) {
		t.Fatalf("evaluation JSON has no progress: %s", raw)
	}
}
