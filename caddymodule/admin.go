package caddymodule

import (
	"errors"
	"io"
	"strings"

	"encoding/json"
	"fmt"
	"github.com/modelgate/gateway/reliability"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(AdminAPI{})
}

// AdminAPI is the `admin.api.llm` module: operator routes on Caddy's admin
// endpoint, which is bound to localhost by default and never exposed with
// the gateway's public listeners.
//
//	GET|POST /llm/keys, GET|DELETE /llm/keys/{id}, POST /llm/keys/{id}/rotate
//	     -> list, create, show, revoke and rotate API keys (see keyadmin.go)
//	POST /llm/training_requests/{id}  {"status": "reviewing"|"approved"|"declined"|"completed"|"requested"}
//	     -> 200 the training request
//	POST /llm/gates/clear  {"operation_id": "<op_...>", "evaluator_id": "<evr_...>"}
//	     -> 200 the gate's health record, cleared: the gate refunds again
//	GET  /llm/backup  -> 200 a consistent copy of the store (a bbolt file),
//	     taken while the gateway serves (`caddy llm backup`)
//
// A key's plain text is only in the answer that created or rotated it; the
// store keeps its hash.
type AdminAPI struct{}

// CaddyModule returns the Caddy module information.
func (AdminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.llm",
		New: func() caddy.Module { return new(AdminAPI) },
	}
}

// Routes implements caddy.AdminRouter.
func (AdminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{
		{Pattern: "/llm/keys", Handler: caddy.AdminHandlerFunc(handleKeys)},
		{Pattern: "/llm/keys/", Handler: caddy.AdminHandlerFunc(handleKey)},
		{Pattern: "/llm/training_requests/", Handler: caddy.AdminHandlerFunc(handleTrainingStatus)},
		{Pattern: "/llm/gates/clear", Handler: caddy.AdminHandlerFunc(handleClearGate)},
		{Pattern: "/llm/credit", Handler: caddy.AdminHandlerFunc(handleCredit)},
		{Pattern: "/llm/auto_topup", Handler: caddy.AdminHandlerFunc(handleAutoTopup)},
		{Pattern: "/llm/backup", Handler: caddy.AdminHandlerFunc(handleBackup)},
	}
}

// runningApp is the llm app of the running config.
func runningApp() (*App, error) {
	appIface, err := caddy.ActiveContext().App("llm")
	if err != nil {
		return nil, err
	}
	a := appIface.(*App)
	if a.storeOrNil() == nil {
		return nil, errNotStarted
	}
	return a, nil
}

// Interface guards.
var _ caddy.AdminRouter = AdminAPI{}

// handleTrainingStatus sets a training request's status: the operator's
// side of the sales process.
func handleTrainingStatus(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed")}
	}
	id := strings.TrimPrefix(r.URL.Path, "/llm/training_requests/")
	if id == "" || strings.Contains(id, "/") {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("no training request id in the path")}
	}
	var req struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("decoding request: %v", err)}
	}
	a, err := runningApp()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	tr, err := a.storeOrNil().SetTrainingStatus(id, req.Status)
	switch {
	case errors.Is(err, reliability.ErrNotFound):
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: err}
	case err != nil:
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: err}
	}
	a.logger.Info("training request status set", zap.String("id", tr.ID), zap.String("status", tr.Status))
	return writeAdminJSON(w, http.StatusOK, tr)
}

// handleClearGate clears the unreliable flag of a ship gate: the operator's
// explicit action after checking the gate's evaluator, which lets the gate
// make eval-gated refunds again (see reliability.GateHealth).
func handleClearGate(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed")}
	}
	a, err := runningApp()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	h, err := clearGate(a.storeOrNil(), http.MaxBytesReader(w, r.Body, 1<<16), time.Now())
	if err != nil {
		return err
	}
	a.logger.Info("ship gate cleared", zap.String("operation_id", h.OperationID), zap.String("evaluator_id", h.EvaluatorID))
	return writeAdminJSON(w, http.StatusOK, h)
}

// clearGate reads a POST /llm/gates/clear body and clears the gate it
// names in st; its errors are caddy.APIError with the status to answer.
func clearGate(st *reliability.BoltStore, body io.Reader, now time.Time) (reliability.GateHealth, error) {
	var req struct {
		OperationID string `json:"operation_id"`
		EvaluatorID string `json:"evaluator_id"`
	}
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return reliability.GateHealth{}, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("decoding request: %v", err)}
	}
	if req.OperationID == "" || req.EvaluatorID == "" {
		return reliability.GateHealth{}, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("operation_id and evaluator_id are required")}
	}
	h, err := st.ClearGateHealth(req.OperationID, req.EvaluatorID, now)
	switch {
	case errors.Is(err, reliability.ErrNotFound):
		return reliability.GateHealth{}, caddy.APIError{HTTPStatus: http.StatusNotFound,
			Err: fmt.Errorf("the eval pass has no record of gate %s of operation %s", req.EvaluatorID, req.OperationID)}
	case err != nil:
		return reliability.GateHealth{}, caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("clearing gate: %v", err)}
	}
	return h, nil
}
