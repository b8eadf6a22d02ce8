package reliability

import (
	"fmt"
	"net/http"
)

// getDataset serves GET /datasets/{id}.
func (a *API) getDataset(_ *http.Request, rc reqCtx) (int, any, *apiError) {
	ds, aerr := a.ownDataset(rc, rc.id, "")
	if aerr != nil {
		return 0, nil, aerr
	}
	return http.StatusOK, ds, nil
}

// ownDataset loads a dataset of the org named by param (empty for the path).
func (a *API) ownDataset(rc reqCtx, id, param string) (Dataset, *apiError) {
	return load(a, rc, "dataset", id, param, a.Store.Dataset, func(ds Dataset) string { return ds.OrgID })
}

// listDatasets serves GET /datasets.
func (a *API) listDatasets(r *http.Request, rc reqCtx) (int, any, *apiError) {
	p, aerr := pageQuery(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	page, err := a.Store.ListDatasets(rc.orgID, p)
	if err != nil {
		return 0, nil, a.fromStore(err, "listing datasets", "", "", "")
	}
	return http.StatusOK, listResponse(page), nil
}

// createDataset serves POST /datasets.
func (a *API) createDataset(r *http.Request, rc reqCtx) (int, any, *apiError) {
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("operation_id", "name"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	for _, name := range []string{"operation_id", "name"} {
		if verr := obj.required(name); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	ref, _, verr := obj.str("operation_id")
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	name, _, verr := obj.text("name", 1, maxNameLen)
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	op, aerr := a.operationRef(rc, ref, "operation_id")
	if aerr != nil {
		return 0, nil, aerr
	}
	ds := Dataset{OrgID: rc.orgID, OperationID: op.ID, Name: name, CreatedAt: a.now()}
	if err := a.Store.CreateDataset(&ds); err != nil {
		return 0, nil, a.fromStore(err, "creating dataset", "operation_id", "operation", op.ID)
	}
	return http.StatusCreated, ds, nil
}

// listDatasetItems serves GET /datasets/{id}/items.
func (a *API) listDatasetItems(r *http.Request, rc reqCtx) (int, any, *apiError) {
	if _, aerr := a.ownDataset(rc, rc.id, ""); aerr != nil {
		return 0, nil, aerr
	}
	p, aerr := pageQuery(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	page, err := a.Store.ListDatasetItems(rc.id, p)
	if err != nil {
		return 0, nil, a.fromStore(err, "listing dataset items", "", "", "")
	}
	return http.StatusOK, listResponse(page), nil
}

// addDatasetItems serves POST /datasets/{id}/items: 201 with the items
// added, in the order sent, as one page of a list.
func (a *API) addDatasetItems(r *http.Request, rc reqCtx) (int, any, *apiError) {
	ds, aerr := a.ownDataset(rc, rc.id, "")
	if aerr != nil {
		return 0, nil, aerr
	}
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("items"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if verr := obj.required("items"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	raws, _, verr := obj.array("items")
	if verr == nil && (len(raws) < 1 || len(raws) > maxItemsPerAdd) {
		verr = invalid("items", "must have 1 to %d items, not %d", maxItemsPerAdd, len(raws))
	}
	if verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if ds.Status == DatasetGolden {
		return 0, nil, errBadRequest(&ValidationError{Code: CodeDatasetFrozen,
			Message: fmt.Sprintf("dataset %s is golden, and a golden dataset is frozen: create a new dataset to add items", ds.ID)})
	}
	items := make([]DatasetItem, len(raws))
	now := a.now()
	for i, raw := range raws {
		it, verr := parseDatasetItem(raw)
		if verr != nil {
			return 0, nil, errBadRequest(under(fmt.Sprintf("items[%d]", i), verr))
		}
		it.CreatedAt = now
		items[i] = it
	}
	checked := map[string]bool{}
	for i, it := range items {
		if it.SourceCallID == nil || checked[*it.SourceCallID] {
			continue
		}
		param := fmt.Sprintf("items[%d].source_call_id", i)
		if _, aerr := load(a, rc, "call", *it.SourceCallID, param, a.Store.Call, func(c Call) string { return c.OrgID }); aerr != nil {
			return 0, nil, aerr
		}
		checked[*it.SourceCallID] = true
	}
	_, stored, err := a.Store.AddDatasetItems(ds.ID, items)
	if err != nil {
		return 0, nil, a.fromStore(err, "adding dataset items", "", "dataset", ds.ID)
	}
	return http.StatusCreated, Page[DatasetItem]{Object: ObjectList, Data: stored}, nil
}

// parseDatasetItem reads one item of an add.
func parseDatasetItem(raw []byte) (DatasetItem, *ValidationError) {
	obj, verr := parseObject(raw)
	if verr != nil {
		return DatasetItem{}, invalid("", "must be an object")
	}
	if verr := obj.allow("source_call_id", "input", "expected_output", "weight"); verr != nil {
		return DatasetItem{}, verr
	}
	it := DatasetItem{Weight: DefaultItemWeight}
	if obj.present("source_call_id") {
		id, _, verr := obj.text("source_call_id", 1, maxCallIDLen)
		if verr != nil {
			return DatasetItem{}, verr
		}
		it.SourceCallID = &id
	}
	if obj.present("input") {
		it.Input = obj.raw("input")
	}
	if obj.present("expected_output") {
		it.ExpectedOutput = obj.raw("expected_output")
	}
	if obj.has("weight") {
		w, _, verr := obj.num("weight", 0, maxItemWeight)
		if verr != nil {
			return DatasetItem{}, verr
		}
		it.Weight = w
	}
	return it, nil
}

// promoteDataset serves POST /datasets/{id}/promote. Its request has no
// body; an empty JSON object is accepted too.
func (a *API) promoteDataset(r *http.Request, rc reqCtx) (int, any, *apiError) {
	if _, aerr := a.ownDataset(rc, rc.id, ""); aerr != nil {
		return 0, nil, aerr
	}
	body, aerr := readBody(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if len(body) > 0 {
		obj, verr := parseObject(body)
		if verr != nil {
			return 0, nil, errBadRequest(&ValidationError{Code: CodeInvalidBody, Message: "the request body " + verr.Message})
		}
		if verr := obj.allow(); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	p, err := a.Store.PromoteDataset(rc.id, a.now())
	if err != nil {
		return 0, nil, a.fromStore(err, "promoting dataset", "", "dataset", rc.id)
	}
	return http.StatusOK, p, nil
}
