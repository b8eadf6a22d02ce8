package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// creditRequest is the body of POST /llm/credit.
type creditRequest struct {
	// Org is the org's name.
	Org string `json:"org"`
	// USD is the amount to credit, above zero.
	USD float64 `json:"usd"`
	// Reason is kept on the ledger entry.
	Reason string `json:"reason"`
}

// autoTopupRequest is the body of POST /llm/auto_topup.
type autoTopupRequest struct {
	// Org is the org's name.
	Org string `json:"org"`
	// ThresholdUSD is the credit under which a top-up is made.
	ThresholdUSD float64 `json:"threshold_usd"`
	// AmountUSD is what a top-up credits; 0 turns auto top-up off.
	AmountUSD float64 `json:"amount_usd"`
}

// adminOrg decodes an admin request body into v and finds the running app,
// its store and the org named by name (which must exist: a mistyped name
// is an error, never a new org).
func adminOrg(w http.ResponseWriter, r *http.Request, v any, name func() string) (*App, *reliability.BoltStore, reliability.Org, error) {
	if r.Method != http.MethodPost {
		return nil, nil, reliability.Org{}, caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed")}
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
		return nil, nil, reliability.Org{}, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("decoding request: %v", err)}
	}
	a, err := runningApp()
	if err != nil {
		return nil, nil, reliability.Org{}, caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	st := a.storeOrNil()
	org, err := st.OrgByName(name())
	if errors.Is(err, reliability.ErrNotFound) {
		return nil, nil, reliability.Org{}, caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New(keysUnknownOrgMessage(st, name()))}
	}
	if err != nil {
		return nil, nil, reliability.Org{}, caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("finding org: %v", err)}
	}
	return a, st, org, nil
}

// handleCredit credits an org by hand: POST /llm/credit.
func handleCredit(w http.ResponseWriter, r *http.Request) error {
	var req creditRequest
	a, st, org, err := adminOrg(w, r, &req, func() string { return req.Org })
	if err != nil {
		return err
	}
	if !(req.USD > 0) || math.IsInf(req.USD, 1) {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("usd must be a positive amount")}
	}
	reason := req.Reason
	if reason == "" {
		reason = "manual credit"
	}
	e, err := st.Credit(org.ID, req.USD, reason)
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: err}
	}
	a.logger.Info("org credited", zap.String("org", org.Name), zap.Float64("amount_usd", req.USD), zap.String("reason", reason))
	return writeAdminJSON(w, http.StatusCreated, e)
}

// handleAutoTopup sets an org's auto top-up at run time: POST /llm/auto_topup.
func handleAutoTopup(w http.ResponseWriter, r *http.Request) error {
	var req autoTopupRequest
	a, st, org, err := adminOrg(w, r, &req, func() string { return req.Org })
	if err != nil {
		return err
	}
	t := reliability.AutoTopup{ThresholdUSD: req.ThresholdUSD, AmountUSD: req.AmountUSD}
	if err := t.Validate(); err != nil {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: err}
	}
	if err := a.setAutoTopup(st, org.ID, t); err != nil {
		return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err}
	}
	a.logger.Info("auto top-up set", zap.String("org", org.Name), zap.Float64("threshold_usd", t.ThresholdUSD), zap.Float64("amount_usd", t.AmountUSD))
	return writeAdminJSON(w, http.StatusOK, t)
}

// writeAdminJSON answers an admin request with v as JSON.
func writeAdminJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}
