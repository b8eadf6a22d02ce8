package reliability

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// doneEvaluation stores a done evaluation of the dataset's current version
// whose every item scored score with each evaluator.
func (f *fixture) doneEvaluation(t *testing.T, datasetID string, score float64, evaluatorIDs ...string) Evaluation {
	t.Helper()
	e := Evaluation{OrgID: f.org.ID, DatasetID: datasetID, EvaluatorIDs: evaluatorIDs}
	if err := f.s.CreateEvaluation(&e); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StartEvaluation(e.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	items, _, err := f.s.evaluationInputs(e)
	if err != nil {
		t.Fatal(err)
	}
	var results []EvaluationResult
	for _, it := range items {
		for _, id := range evaluatorIDs {
			results = append(results, EvaluationResult{DatasetItemID: it.ID, EvaluatorID: id, Score: score})
		}
	}
	if err := f.s.AddEvaluationResults(e.ID, results); err != nil {
		t.Fatal(err)
	}
	if e, err = f.s.FinishEvaluation(e.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPromoteDataset(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	schema := f.evaluator(t, KindJSONSchema, `{"schema":{"type":"object"}}`)
	f.gates(t, ShipGate{EvaluatorID: yes.ID, MinScore: 0.8}, ShipGate{EvaluatorID: schema.ID, MinScore: 0.5})
	ds := f.dataset(t, item(`"q"`, `"yes"`, 1))

	var unmet *ShipGatesUnmetError
	_, err := f.s.PromoteDataset(ds.ID, time.Now())
	if !errors.As(err, &unmet) || len(unmet.FailedGates) != 2 || unmet.FailedGates[0].ActualScore != nil || unmet.EvaluationID != "" {
		t.Fatalf("no evaluation: %v", err)
	}
	if !strings.Contains(unmet.Error(), "no score") {
		t.Fatalf("message = %q", unmet.Error())
	}

	low := f.doneEvaluation(t, ds.ID, 0.7, yes.ID)
	_, err = f.s.PromoteDataset(ds.ID, time.Now())
	if !errors.As(err, &unmet) || unmet.EvaluationID != low.ID || len(unmet.FailedGates) != 2 {
		t.Fatalf("low score: %v", err)
	}
	g := unmet.FailedGates
	if g[0].EvaluatorID != yes.ID || g[0].MinScore != 0.8 || g[0].ActualScore == nil || *g[0].ActualScore != 0.7 ||
		g[1].EvaluatorID != schema.ID || g[1].ActualScore != nil {
		t.Fatalf("failed gates = %+v", g)
	}
	if got, _ := f.s.Dataset(ds.ID); got.Status != DatasetDraft {
		t.Fatal("a refused promotion changed the dataset")
	}

	good := f.doneEvaluation(t, ds.ID, 0.9, yes.ID, schema.ID)
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	p, err := f.s.PromoteDataset(ds.ID, at)
	if err != nil {
		t.Fatal(err)
	}
	if p.EvaluationID != good.ID || p.Dataset.Status != DatasetGolden || !p.Dataset.PromotedAt.Equal(at) {
		t.Fatalf("promotion = %+v", p)
	}
	again, err := f.s.PromoteDataset(ds.ID, at.Add(time.Hour))
	if err != nil || !again.Dataset.PromotedAt.Equal(at) {
		t.Fatalf("promoting a golden dataset again: %+v, %v", again, err)
	}
}

func TestPromoteJudgesTheCurrentVersion(t *testing.T) {
	f := newFixture(t)
	yes := f.evaluator(t, KindRegex, `{"pattern":"yes"}`)
	f.gates(t, ShipGate{EvaluatorID: yes.ID, MinScore: 0.5})
	ds := f.dataset(t, item(`"q"`, `"yes"`, 1))
	f.doneEvaluation(t, ds.ID, 1, yes.ID)
	if _, _, err := f.s.AddDatasetItems(ds.ID, []DatasetItem{item(`"r"`, `"no"`, 1)}); err != nil {
		t.Fatal(err)
	}
	var unmet *ShipGatesUnmetError
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); !errors.As(err, &unmet) || unmet.EvaluationID != "" {
		t.Fatalf("an evaluation of an older version was used: %v", err)
	}
	f.doneEvaluation(t, ds.ID, 0.6, yes.ID)
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestPromoteWithoutGates(t *testing.T) {
	f := newFixture(t)
	ds := f.dataset(t)
	p, err := f.s.PromoteDataset(ds.ID, time.Now())
	if err != nil || p.Dataset.Status != DatasetGolden || p.EvaluationID != "" {
		t.Fatalf("promotion without gates = %+v, %v", p, err)
	}
	if _, err := f.s.PromoteDataset("ds_missing", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing dataset: %v", err)
	}
}
