package reliability

import (
	"net/http"
	"strings"
)

// getEvaluator serves GET /evaluators/{id}.
func (a *API) getEvaluator(_ *http.Request, rc reqCtx) (int, any, *apiError) {
	ev, aerr := a.ownEvaluator(rc)
	if aerr != nil {
		return 0, nil, aerr
	}
	return http.StatusOK, ev, nil
}

// ownEvaluator loads the evaluator of the path.
func (a *API) ownEvaluator(rc reqCtx) (Evaluator, *apiError) {
	return load(a, rc, "evaluator", rc.id, "", a.Store.Evaluator, func(ev Evaluator) string { return ev.OrgID })
}

// listEvaluators serves GET /evaluators.
func (a *API) listEvaluators(r *http.Request, rc reqCtx) (int, any, *apiError) {
	p, aerr := pageQuery(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	page, err := a.Store.ListEvaluators(rc.orgID, p)
	if err != nil {
		return 0, nil, a.fromStore(err, "listing evaluators", "", "", "")
	}
	return http.StatusOK, listResponse(page), nil
}

// createEvaluator serves POST /evaluators.
func (a *API) createEvaluator(r *http.Request, rc reqCtx) (int, any, *apiError) {
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("name", "kind", "config", "operation_id"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	for _, name := range []string{"name", "kind", "config"} {
		if verr := obj.required(name); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	ev := Evaluator{OrgID: rc.orgID, CreatedAt: a.now()}
	var verr *ValidationError
	if ev.Name, _, verr = obj.text("name", 1, maxNameLen); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if ev.Kind, _, verr = obj.str("kind"); verr == nil && !validKind(ev.Kind) {
		verr = invalid("kind", "must be one of %s", strings.Join(evaluatorKinds, ", "))
	}
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	ev.Config = obj.raw("config")
	if _, verr := parseConfig(ev.Kind, ev.Config); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if obj.present("operation_id") {
		id, aerr := a.evaluatorOperation(rc, obj)
		if aerr != nil {
			return 0, nil, aerr
		}
		ev.OperationID = &id
	}
	if err := a.Store.CreateEvaluator(&ev); err != nil {
		opID := ""
		if ev.OperationID != nil {
			opID = *ev.OperationID
		}
		return 0, nil, a.fromStore(err, "creating evaluator", "operation_id", "operation", opID)
	}
	return http.StatusCreated, ev, nil
}

// evaluatorOperation resolves the operation_id field of an evaluator.
func (a *API) evaluatorOperation(rc reqCtx, obj jsonObject) (string, *apiError) {
	ref, _, verr := obj.str("operation_id")
	if verr != nil {
		return "", errBadRequest(verr)
	}
	op, aerr := a.operationRef(rc, ref, "operation_id")
	if aerr != nil {
		return "", aerr
	}
	return op.ID, nil
}

// patchEvaluator serves PATCH /evaluators/{id}.
func (a *API) patchEvaluator(r *http.Request, rc reqCtx) (int, any, *apiError) {
	ev, aerr := a.ownEvaluator(rc)
	if aerr != nil {
		return 0, nil, aerr
	}
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if obj.has("kind") {
		return 0, nil, errBadRequest(invalid("kind", "cannot be changed: an evaluator keeps its kind, create a new evaluator instead"))
	}
	if verr := obj.allow("name", "operation_id", "config"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	var u EvaluatorUpdate
	if obj.has("name") {
		name, _, verr := obj.text("name", 1, maxNameLen)
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		u.Name = &name
	}
	if obj.has("operation_id") {
		u.SetOperationID = true
		if !obj.isNull("operation_id") {
			id, aerr := a.evaluatorOperation(rc, obj)
			if aerr != nil {
				return 0, nil, aerr
			}
			u.OperationID = &id
		}
	}
	if obj.has("config") {
		u.Config = obj.raw("config")
		if _, verr := parseConfig(ev.Kind, u.Config); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	updated, err := a.Store.UpdateEvaluator(ev.ID, u)
	if err != nil {
		return 0, nil, a.fromStore(err, "updating evaluator", "", "evaluator", ev.ID)
	}
	return http.StatusOK, updated, nil
}
