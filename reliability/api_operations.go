package reliability

import (
	"errors"
	"fmt"
	"net/http"
)

// getOperation serves GET /operations/{id}.
func (a *API) getOperation(_ *http.Request, rc reqCtx) (int, any, *apiError) {
	op, aerr := a.ownOperation(rc)
	if aerr != nil {
		return 0, nil, aerr
	}
	return http.StatusOK, op, nil
}

// ownOperation loads the operation of the path.
func (a *API) ownOperation(rc reqCtx) (Operation, *apiError) {
	return load(a, rc, "operation", rc.id, "", a.Store.Operation, func(op Operation) string { return op.OrgID })
}

// listOperations serves GET /operations.
func (a *API) listOperations(r *http.Request, rc reqCtx) (int, any, *apiError) {
	p, aerr := pageQuery(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	page, err := a.Store.ListOperations(rc.orgID, p)
	if err != nil {
		return 0, nil, a.fromStore(err, "listing operations", "", "", "")
	}
	return http.StatusOK, listResponse(page), nil
}

// createOperation serves POST /operations.
func (a *API) createOperation(r *http.Request, rc reqCtx) (int, any, *apiError) {
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("key", "name", "description", "ship_gates"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	op := Operation{OrgID: rc.orgID, CreatedAt: a.now()}
	if verr := obj.required("key"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	key, _, verr := obj.str("key")
	if verr == nil && !ValidOperationKey(key) {
		verr = invalid("key", "must be 1 to %d characters of a-z, 0-9 and _", maxOperationKeyLen)
	}
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	op.Key = key
	if verr := obj.required("name"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if op.Name, _, verr = obj.text("name", 1, maxNameLen); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if obj.present("description") {
		desc, _, verr := obj.text("description", 0, maxDescriptionLen)
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		op.Description = &desc
	}
	if obj.has("ship_gates") {
		if op.ShipGates, aerr = a.shipGates(rc, obj); aerr != nil {
			return 0, nil, aerr
		}
	}
	err := a.Store.CreateOperation(&op)
	if errors.Is(err, ErrConflict) {
		return 0, nil, errBadRequest(&ValidationError{Param: "key", Code: CodeAlreadyExists,
			Message: fmt.Sprintf("the organisation already has an operation with key %q", key)})
	}
	if err != nil {
		return 0, nil, a.fromStore(err, "creating operation", "", "", "")
	}
	return http.StatusCreated, op, nil
}

// patchOperation serves PATCH /operations/{id}.
func (a *API) patchOperation(r *http.Request, rc reqCtx) (int, any, *apiError) {
	if _, aerr := a.ownOperation(rc); aerr != nil {
		return 0, nil, aerr
	}
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("name", "description", "ship_gates"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	var u OperationUpdate
	if obj.has("name") {
		name, _, verr := obj.text("name", 1, maxNameLen)
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		u.Name = &name
	}
	if obj.has("description") {
		u.SetDescription = true
		if !obj.isNull("description") {
			desc, _, verr := obj.text("description", 0, maxDescriptionLen)
			if verr != nil {
				return 0, nil, errBadRequest(verr)
			}
			u.Description = &desc
		}
	}
	if obj.has("ship_gates") {
		gates, aerr := a.shipGates(rc, obj)
		if aerr != nil {
			return 0, nil, aerr
		}
		u.ShipGates = &gates
	}
	op, err := a.Store.PatchOperation(rc.id, u)
	if err != nil {
		return 0, nil, a.fromStore(err, "updating operation", "", "operation", rc.id)
	}
	return http.StatusOK, op, nil
}

// shipGates reads the ship_gates field: each gate's evaluator must be one
// of the org's, once, and its min_score 0 to 1.
func (a *API) shipGates(rc reqCtx, obj jsonObject) ([]ShipGate, *apiError) {
	items, _, verr := obj.array("ship_gates")
	if verr != nil {
		return nil, errBadRequest(verr)
	}
	gates := make([]ShipGate, 0, len(items))
	seen := map[string]bool{}
	for i, raw := range items {
		param := fmt.Sprintf("ship_gates[%d]", i)
		g, verr := parseObject(raw)
		if verr != nil {
			return nil, errBadRequest(invalid(param, "must be an object with evaluator_id and min_score"))
		}
		if verr := g.allow("evaluator_id", "min_score"); verr != nil {
			return nil, errBadRequest(under(param, verr))
		}
		for _, name := range []string{"evaluator_id", "min_score"} {
			if verr := g.required(name); verr != nil {
				return nil, errBadRequest(under(param, verr))
			}
		}
		id, _, verr := g.str("evaluator_id")
		if verr != nil {
			return nil, errBadRequest(under(param, verr))
		}
		minScore, _, verr := g.num("min_score", 0, 1)
		if verr != nil {
			return nil, errBadRequest(under(param, verr))
		}
		if seen[id] {
			return nil, errBadRequest(invalid(param+".evaluator_id", "evaluator %s has a gate already", id))
		}
		seen[id] = true
		ev, err := a.Store.Evaluator(id)
		if errors.Is(err, ErrNotFound) || (err == nil && ev.OrgID != rc.orgID) {
			return nil, errBadRequest(invalid(param+".evaluator_id", "no evaluator with id %q in this organisation", id))
		}
		if err != nil {
			return nil, a.internal("reading evaluator", err)
		}
		gates = append(gates, ShipGate{EvaluatorID: id, MinScore: minScore})
	}
	return gates, nil
}
