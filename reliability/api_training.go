package reliability

import (
	"bytes"
	"errors"
	"net/http"
)

// createTrainingRequest serves POST /datasets/{id}/training. The SPEC
// requires a body, so an empty one is refused; {} asks without notes.
func (a *API) createTrainingRequest(r *http.Request, rc reqCtx) (int, any, *apiError) {
	ds, aerr := a.ownDataset(rc, rc.id, "")
	if aerr != nil {
		return 0, nil, aerr
	}
	body, aerr := readBody(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, nil, errBadRequest(&ValidationError{Code: CodeInvalidBody,
			Message: "the request body is required: send a JSON object, {} when there are no notes"})
	}
	obj, verr := parseObject(body)
	if verr != nil {
		return 0, nil, errBadRequest(&ValidationError{Code: CodeInvalidBody, Message: "the request body " + verr.Message})
	}
	if verr := obj.allow("notes"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	tr := TrainingRequest{OrgID: rc.orgID, DatasetID: ds.ID, RequestedByUserID: rc.userID, CreatedAt: a.now()}
	if obj.present("notes") {
		notes, _, verr := obj.text("notes", 0, maxTrainingNotesLen)
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		tr.Notes = &notes
	}
	var salesTo []string
	if a.SalesEmail != "" {
		salesTo = []string{a.SalesEmail}
	}
	if err := a.Store.CreateTrainingRequest(&tr, salesTo); err != nil {
		return 0, nil, a.fromStore(err, "creating training request", "", "dataset", ds.ID)
	}
	if len(salesTo) == 0 {
		a.log("training request "+tr.ID+" stored without an email", errors.New("no sales address is configured"))
	}
	return http.StatusCreated, tr, nil
}
