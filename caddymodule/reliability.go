package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

func init() {
	caddy.RegisterModule(Reliability{})
}

// Reliability is the `llm_reliability` HTTP handler: the recorded calls,
// the key endpoints of an org's admin key (keyapi.go) and the reliability
// API. Requests for other paths go to the next handler.
type Reliability struct {
	// Prefix is the path prefix the endpoints live under. Default "/v1".
	Prefix string `json:"prefix,omitempty"`

	app    *App
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Reliability) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_reliability",
		New: func() caddy.Module { return new(Reliability) },
	}
}

// Provision reaches the llm app.
func (h *Reliability) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Prefix == "" {
		h.Prefix = "/v1"
	}
	appIface, err := ctx.App("llm")
	if err != nil {
		return fmt.Errorf("loading llm app: %w", err)
	}
	h.app = appIface.(*App)
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Reliability) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	h.app.markDraining(w)
	rest, ok := strings.CutPrefix(r.URL.Path, h.Prefix)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	seg := strings.Split(strings.Trim(rest, "/"), "/")
	if seg[0] == "keys" {
		h.serveKeys(w, r, seg[1:])
		return nil
	}
	what, money := isMoneyPath(rest)
	if (seg[0] != "calls" || len(seg) > 2) && !money {
		return h.serveAPI(w, r, next, rest)
	}
	if r.Method != http.MethodGet && !money {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed", message: "use GET"}, false)
		return nil
	}
	p, aerr := h.app.principalOf(r)
	if aerr != nil {
		writeError(w, aerr, false)
		return nil
	}
	st := h.app.storeOrNil()
	if st == nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "api_error", code: "starting", message: errNotStarted.Error()}, false)
		return nil
	}
	switch {
	case money:
		aerr = h.serveMoney(w, r, st, p, what)
	case len(seg) == 2:
		aerr = h.getCall(w, st, p, seg[1])
	default:
		aerr = h.listCalls(w, r, st, p)
	}
	if aerr != nil {
		writeError(w, aerr, false)
	}
	return nil
}

// serveAPI hands the reliability endpoints other than the calls to the
// reliability package, for the authenticated org.
func (h *Reliability) serveAPI(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, rest string) error {
	if !reliability.IsAPIPath(rest) {
		return next.ServeHTTP(w, r)
	}
	if aerr := checkHeaderSize(r, h.app.limits.maxHeader); aerr != nil {
		writeError(w, aerr, false)
		return nil
	}
	defer armBodyTimeout(w, r, h.app.limits.bodyTimeout)()
	p, aerr := h.app.principalOf(r)
	if aerr != nil {
		writeError(w, aerr, false)
		return nil
	}
	if h.app.storeOrNil() == nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "api_error", code: "starting", message: errNotStarted.Error()}, false)
		return nil
	}
	if !h.app.rt.api.ServeHTTP(w, r, p.orgID, p.plan, p.keyID, rest) {
		return next.ServeHTTP(w, r)
	}
	return nil
}

func (h *Reliability) getCall(w http.ResponseWriter, st reliability.Store, p *principal, id string) *apiError {
	c, err := st.Call(id)
	if errors.Is(err, reliability.ErrNotFound) {
		return errNotFound(fmt.Sprintf("no call with id %q", id))
	}
	if err != nil {
		return h.internal("reading call", err)
	}
	if c.OrgID != p.orgID {
		return errForbidden("this call belongs to another organisation")
	}
	return h.writeJSONValue(w, http.StatusOK, c)
}

func (h *Reliability) listCalls(w http.ResponseWriter, r *http.Request, st reliability.Store, p *principal) *apiError {
	q := r.URL.Query()
	pq, aerr := pageQuery(q.Get("limit"), q.Get("cursor"))
	if aerr != nil {
		return aerr
	}
	pq.MaxBytes = h.app.retention.maxPage
	cq := reliability.CallQuery{PageQuery: pq}
	if v := q.Get("operation_id"); v != "" {
		op, err := st.ResolveOperation(p.orgID, v)
		switch {
		case err == nil:
			cq.OperationID = op.ID
		case errors.Is(err, reliability.ErrNotFound):
			return errNotFound(fmt.Sprintf("no operation has the key or id %q", v))
		default:
			return h.internal("resolving operation", err)
		}
	}
	page, err := st.ListCalls(p.orgID, cq)
	if errors.Is(err, reliability.ErrBadCursor) {
		return errInvalid("cursor", "cursor is not one this API returned")
	}
	if err != nil {
		return h.internal("listing calls", err)
	}
	return h.writeJSONValue(w, http.StatusOK, listBody(page))
}

// listEnvelope is the SPEC list shape.
type listEnvelope[T any] struct {
	Object     string  `json:"object"`
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func listBody[T any](p reliability.Page[T]) listEnvelope[T] {
	data := p.Data
	if data == nil {
		data = []T{}
	}
	return listEnvelope[T]{Object: "list", Data: data, HasMore: p.HasMore, NextCursor: p.NextCursor}
}

// pageQuery reads the shared limit and cursor parameters (limit 1..200,
// default 50).
func pageQuery(limit, cursor string) (reliability.PageQuery, *apiError) {
	pq := reliability.PageQuery{Limit: 50, Cursor: cursor}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > 200 {
			return pq, errInvalid("limit", "limit must be an integer from 1 to 200")
		}
		pq.Limit = n
	}
	return pq, nil
}

func (h *Reliability) writeJSONValue(w http.ResponseWriter, status int, v any) *apiError {
	b, err := json.Marshal(v)
	if err != nil {
		return h.internal("encoding response", err)
	}
	writeJSON(w, status, b)
	return nil
}

func (h *Reliability) internal(what string, err error) *apiError {
	h.logger.Error(what, zap.Error(err))
	return errInternal(what + " failed")
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Reliability)(nil)
	_ caddyhttp.MiddlewareHandler = (*Reliability)(nil)
)
