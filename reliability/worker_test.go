package reliability

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// startWorker starts a worker on the store and stops it when the test ends.
func startWorker(t *testing.T, s *BoltStore, models ModelCaller, opts WorkerOptions) *Worker {
	t.Helper()
	w := NewWorker(s, models, opts)
	w.Start()
	t.Cleanup(w.Stop)
	return w
}

// waitStatus waits until the evaluation reaches status.
func waitStatus(t *testing.T, s *BoltStore, id, status string) Evaluation {
	t.Helper()
	var e Evaluation
	waitFor(t, "evaluation "+id+" to be "+status, func() bool {
		var err error
		e, err = s.Evaluation(id)
		return err == nil && e.Status == status
	})
	return e
}

// createEvaluation stores a pending evaluation.
func (f *fixture) createEvaluation(t *testing.T, datasetID, modelVersion string, evaluatorIDs ...string) Evaluation {
	t.Helper()
	e := Evaluation{OrgID: f.org.ID, DatasetID: datasetID, ModelVersion: modelVersion, EvaluatorIDs: evaluatorIDs}
	if err := f.s.CreateEvaluation(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWorkerRunsEvaluationToDone(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	judge := f.evaluator(t, KindLLMJudge, `{"model":"judge/a","prompt":"Q: {{input}} A: {{output}}"}`)
	ds := f.dataset(t, item(`"q1"`, `"yes GOOD"`, 3), item(`"q2"`, `"no"`, 1))
	e := f.createEvaluation(t, ds.ID, "", yes.ID, judge.ID)
	models := &fakeModels{}
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	startWorker(t, f.s, models, WorkerOptions{Now: func() time.Time { return at }})

	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	// regex: (3*1 + 1*0) / 4; judge: (3*0.9 + 1*0.3) / 4.
	if math.Abs(done.SummaryScores[yes.ID]-0.75) > 1e-9 || math.Abs(done.SummaryScores[judge.ID]-0.75) > 1e-9 {
		t.Fatalf("summary = %v", done.SummaryScores)
	}
	if !done.StartedAt.Equal(at) || !done.CompletedAt.Equal(at) || done.Error != nil {
		t.Fatalf("done = %+v", done)
	}
	results, _ := f.s.EvaluationResults(e.ID)
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
	for _, r := range results {
		if r.EvaluatorID == judge.ID && !strings.Contains(string(r.Details), `"reply"`) {
			t.Fatalf("judge details = %s", r.Details)
		}
	}
	if chats := models.calls(); len(chats) != 2 || chats[0].prompt != "Q: q1 A: yes GOOD" {
		t.Fatalf("judge calls = %+v", chats)
	}
}

func TestWorkerSendsInputToModelVersion(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"^echo: yes"}`)
	ds := f.dataset(t,
		item(`"yes please"`, `"unused"`, 1),
		item(`[{"role":"user","content":[{"type":"text","text":"no thanks"}]}]`, `"unused"`, 1),
		DatasetItem{ExpectedOutput: json.RawMessage(`"x"`), Weight: 1},
	)
	e := f.createEvaluation(t, ds.ID, "demo/echo", yes.ID)
	models := &fakeModels{}
	startWorker(t, f.s, models, WorkerOptions{})
	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	if math.Abs(done.SummaryScores[yes.ID]-1.0/3) > 1e-9 {
		t.Fatalf("summary = %v", done.SummaryScores)
	}
	chats := models.calls()
	if len(chats) != 2 || chats[0].model != "demo/echo" || chats[0].orgID != f.org.ID || chats[0].prompt != "yes please" || chats[1].prompt != "no thanks" {
		t.Fatalf("model calls = %+v", chats)
	}
	results, _ := f.s.EvaluationResults(e.ID)
	if !strings.Contains(string(results[0].Details), `"output":"echo: yes please"`) {
		t.Fatalf("details = %s", results[0].Details)
	}
	if !strings.Contains(string(results[2].Details), `"error":"the item has no input`) || results[2].Score != 0 {
		t.Fatalf("item without input = %+v", results[2])
	}
}

func TestWorkerUnscorableItemScoresZeroWithReason(t *testing.T) {
	f := newFixture(t)
	judge := f.evaluator(t, KindLLMJudge, `{"model":"judge/a","prompt":"{{output}}"}`)
	ds := f.dataset(t, item(`"q"`, `"NO-NUMBER"`, 1), item(`"q"`, `"GOOD"`, 1))
	e := f.createEvaluation(t, ds.ID, "", judge.ID)
	startWorker(t, f.s, &fakeModels{}, WorkerOptions{})
	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	if math.Abs(done.SummaryScores[judge.ID]-0.45) > 1e-9 {
		t.Fatalf("summary = %v, want (0 + 0.9) / 2", done.SummaryScores)
	}
	results, _ := f.s.EvaluationResults(e.ID)
	if results[0].Score != 0 || !strings.Contains(string(results[0].Details), "has no number") {
		t.Fatalf("unscorable result = %+v %s", results[0], results[0].Details)
	}
}

func TestWorkerFailsEvaluationOnModelError(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	ds := f.dataset(t, item(`"q"`, `"yes"`, 1))
	e := f.createEvaluation(t, ds.ID, "fail/model", yes.ID)
	var logged []string
	startWorker(t, f.s, &fakeModels{}, WorkerOptions{Logger: func(msg string, _ error) { logged = append(logged, msg) }})
	failed := waitStatus(t, f.s, e.ID, EvaluationFailed)
	if failed.Error == nil || !strings.Contains(*failed.Error, "model unavailable") || failed.CompletedAt == nil || failed.SummaryScores != nil {
		t.Fatalf("failed = %+v", failed)
	}
	if open, _ := f.s.openEvaluations(); len(open) != 0 {
		t.Fatalf("a failed evaluation is open: %v", open)
	}

	judge := f.evaluator(t, KindLLMJudge, `{"model":"fail/judge","prompt":"{{output}}"}`)
	e2 := f.createEvaluation(t, ds.ID, "", judge.ID)
	failed = waitStatus(t, f.s, e2.ID, EvaluationFailed)
	if !strings.Contains(*failed.Error, "model unavailable") {
		t.Fatalf("judge failure = %s", *failed.Error)
	}
}

func TestWorkerWithoutModelCallerFailsModelVersion(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	ds := f.dataset(t, item(`"q"`, `"yes"`, 1))
	e := f.createEvaluation(t, ds.ID, "demo/echo", yes.ID)
	startWorker(t, f.s, nil, WorkerOptions{})
	failed := waitStatus(t, f.s, e.ID, EvaluationFailed)
	if !strings.Contains(*failed.Error, "no model caller") {
		t.Fatalf("error = %s", *failed.Error)
	}
}

func TestWorkerResumesRunningEvaluation(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"^echo: yes"}`)
	ds := f.dataset(t, item(`"yes 1"`, `""`, 1), item(`"yes 2"`, `""`, 1), item(`"no 3"`, `""`, 1))
	e := f.createEvaluation(t, ds.ID, "demo/echo", yes.ID)
	// A previous process started the evaluation and scored the first item
	// before it stopped.
	started := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := f.s.StartEvaluation(e.ID, started); err != nil {
		t.Fatal(err)
	}
	items, _, _ := f.s.evaluationInputs(e)
	if err := f.s.AddEvaluationResults(e.ID, []EvaluationResult{{DatasetItemID: items[0].ID, EvaluatorID: yes.ID, Score: 0.5}}); err != nil {
		t.Fatal(err)
	}
	models := &fakeModels{}
	startWorker(t, f.s, models, WorkerOptions{})
	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	if math.Abs(done.SummaryScores[yes.ID]-0.5) > 1e-9 || !done.StartedAt.Equal(started) {
		t.Fatalf("resumed = %+v, want (0.5 + 1 + 0) / 3 and the first started_at", done)
	}
	if chats := models.calls(); len(chats) != 2 || chats[0].prompt != "yes 2" {
		t.Fatalf("resume called the model for %+v, want the two unscored items", chats)
	}
}

func TestWorkerShowsProgressAndSurvivesStop(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	ds := f.dataset(t, item(`"yes 1"`, `""`, 1), item(`"yes 2"`, `""`, 1), item(`"yes 3"`, `""`, 1))
	e := f.createEvaluation(t, ds.ID, "demo/echo", yes.ID)
	held := &fakeModels{hold: make(chan struct{})}
	w := NewWorker(f.s, held, WorkerOptions{})
	w.Start()
	held.hold <- struct{}{}
	waitFor(t, "the first result", func() bool {
		results, _ := f.s.EvaluationResults(e.ID)
		return len(results) == 1
	})
	if got, _ := f.s.Evaluation(e.ID); got.Status != EvaluationRunning || got.StartedAt == nil {
		t.Fatalf("mid-run = %+v", got)
	}
	w.Stop() // cuts off the model call of the second item
	if got, _ := f.s.Evaluation(e.ID); got.Status != EvaluationRunning {
		t.Fatalf("after Stop = %s, want still running", got.Status)
	}
	models := &fakeModels{}
	startWorker(t, f.s, models, WorkerOptions{})
	done := waitStatus(t, f.s, e.ID, EvaluationDone)
	if done.SummaryScores[yes.ID] != 1 || len(models.calls()) != 2 {
		t.Fatalf("after resume: %+v, %d model calls", done.SummaryScores, len(models.calls()))
	}
}

func TestTwoWorkersRunEachEvaluationOnce(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	var items []DatasetItem
	for range 20 {
		items = append(items, item(`"yes"`, `""`, 1))
	}
	ds := f.dataset(t, items...)
	models := &fakeModels{}
	startWorker(t, f.s, models, WorkerOptions{})
	startWorker(t, f.s, models, WorkerOptions{})
	var ids []string
	for range 3 {
		ids = append(ids, f.createEvaluation(t, ds.ID, "demo/echo", yes.ID).ID)
	}
	for _, id := range ids {
		waitStatus(t, f.s, id, EvaluationDone)
	}
	if n := len(models.calls()); n != 60 {
		t.Fatalf("%d model calls for 3 evaluations of 20 items, want 60", n)
	}
}

func TestWorkerStartStopIdempotent(t *testing.T) {
	f := newFixture(t)
	w := NewWorker(f.s, nil, WorkerOptions{})
	w.Stop() // before Start: nothing to stop
	w.Start()
	w.Start()
	w.Stop()
	w.Stop()
	w.Start() // a stopped worker stays stopped
	if w.state.Load() != workerStopped {
		t.Fatal("a stopped worker started again")
	}
}
