package reliability

import (
	"fmt"
	"net/http"
)

// maxEvaluatorsPerEvaluation bounds evaluator_ids: each evaluator scores
// every item, and some call a model per item.
const maxEvaluatorsPerEvaluation = 64

// evaluationWithResults is GET /evaluations/{id}: the evaluation with the
// results stored so far.
type evaluationWithResults struct {
	Evaluation
	// Results are the results stored so far, never null.
	Results []EvaluationResult `json:"results"`
}

// getEvaluation serves GET /evaluations/{id}, with the results so far, so
// a running evaluation shows its progress.
func (a *API) getEvaluation(_ *http.Request, rc reqCtx) (int, any, *apiError) {
	e, aerr := load(a, rc, "evaluation", rc.id, "", a.Store.Evaluation, func(e Evaluation) string { return e.OrgID })
	if aerr != nil {
		return 0, nil, aerr
	}
	results, err := a.Store.EvaluationResults(e.ID)
	if err != nil {
		return 0, nil, a.internal("reading evaluation results", err)
	}
	return http.StatusOK, evaluationWithResults{Evaluation: e, Results: results}, nil
}

// listEvaluations serves GET /evaluations, without results.
func (a *API) listEvaluations(r *http.Request, rc reqCtx) (int, any, *apiError) {
	p, aerr := pageQuery(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	page, err := a.Store.ListEvaluations(rc.orgID, p)
	if err != nil {
		return 0, nil, a.fromStore(err, "listing evaluations", "", "", "")
	}
	return http.StatusOK, listResponse(page), nil
}

// createEvaluation serves POST /evaluations: 201 with the evaluation
// pending; the worker runs it.
func (a *API) createEvaluation(r *http.Request, rc reqCtx) (int, any, *apiError) {
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("dataset_id", "evaluator_ids", "model_version"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	for _, name := range []string{"dataset_id", "evaluator_ids"} {
		if verr := obj.required(name); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	datasetID, _, verr := obj.str("dataset_id")
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	raws, _, verr := obj.array("evaluator_ids")
	if verr == nil && (len(raws) < 1 || len(raws) > maxEvaluatorsPerEvaluation) {
		verr = invalid("evaluator_ids", "must have 1 to %d items, not %d", maxEvaluatorsPerEvaluation, len(raws))
	}
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	e := Evaluation{OrgID: rc.orgID, DatasetID: datasetID, CreatedAt: a.now()}
	seen := map[string]bool{}
	for i, raw := range raws {
		param := fmt.Sprintf("evaluator_ids[%d]", i)
		id, verr := stringItem(param, raw)
		if verr == nil && seen[id] {
			verr = invalid(param, "evaluator %s is listed twice", id)
		}
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		seen[id] = true
		e.EvaluatorIDs = append(e.EvaluatorIDs, id)
	}
	if obj.present("model_version") {
		if e.ModelVersion, _, verr = obj.text("model_version", 1, maxModelLen); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	if _, aerr := a.ownDataset(rc, datasetID, "dataset_id"); aerr != nil {
		return 0, nil, aerr
	}
	if err := a.Store.CreateEvaluation(&e); err != nil {
		return 0, nil, a.fromStore(err, "creating evaluation", "dataset_id", "dataset", datasetID)
	}
	return http.StatusCreated, e, nil
}
