package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/gateway/internal/jsonlimit"
	"github.com/modelgate/gateway/internal/linger"
	"github.com/modelgate/gateway/translate"
)

// DefaultMaxBodyBytes bounds a request body when API.Limits sets no bound:
// 1000 dataset items of 16 KiB each.
const DefaultMaxBodyBytes = 16 << 20

// Limits bounds what the API reads of a request and writes in a list
// page. A zero field takes its default.
type Limits struct {
	// MaxBodyBytes bounds a request body: a declared Content-Length over
	// it is refused before any of the body is read, and a body without
	// one at its first byte past it; both are 413 request_too_large.
	// Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// JSON bounds a body's nesting depth and number of values (400
	// json_too_deep, json_too_large); zero fields are no bound.
	JSON jsonlimit.Limits
	// MaxPageBytes bounds the stored size of a list page's records (see
	// PageQuery.MaxBytes). Default DefaultMaxPageBytes.
	MaxPageBytes int
}

// limitsKey carries the API's Limits in a request's context to the
// functions that read bodies and pages.
type limitsKey struct{}

// requestLimits is the Limits in force for r.
func requestLimits(r *http.Request) Limits {
	l, _ := r.Context().Value(limitsKey{}).(Limits)
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return l
}

// API serves the reliability endpoints of SPEC section 4 (feedback,
// operations, datasets, evaluators, evaluations) on the store. The Caddy
// glue authenticates a request, then calls ServeHTTP with who it acts for.
// Every write is on disk before the response is sent.
type API struct {
	// Store keeps the records.
	Store *BoltStore
	// Models makes model calls; the API itself makes none, but it is the
	// ModelCaller the glue shares with the Worker.
	Models ModelCaller
	// Logger receives internal failures answered with 500, and other
	// events an operator should see; nil drops them.
	Logger func(msg string, err error)
	// Now is the clock of created_at and of the fair-use window; nil means
	// time.Now.
	Now func() time.Time
	// FairUse caps the refunds thumbs_down feedback makes.
	FairUse FairUse
	// SalesEmail is the address training requests are emailed to; empty
	// stores requests without an email.
	SalesEmail string
	// Limits bounds request bodies and list pages.
	Limits Limits
}

// reqCtx is who a request acts for and the id in its path.
type reqCtx struct {
	orgID  string
	userID string
	id     string
}

// handlerFunc serves one method of one route: a status and a body to
// encode, or an error.
type handlerFunc func(r *http.Request, rc reqCtx) (int, any, *apiError)

// ServeHTTP serves a reliability endpoint for the org orgID, as the user
// (API key) userID. path is the request path with the version prefix
// removed, e.g. "/operations/op_123". It returns false, having written
// nothing, when path is not a reliability endpoint, so the caller can pass
// the request on; /calls is served elsewhere. The endpoints behave the same
// on every plan (a thumbs_down credits the call back on every plan, SPEC
// section 1), so orgPlan does not change what they do: the plan decides
// the eval-gated refund, which the Worker makes.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request, orgID, orgPlan, userID string, path string) bool {
	methods, id, ok := a.route(path)
	if !ok {
		return false
	}
	rc := reqCtx{orgID: orgID, userID: userID, id: id}
	h, ok := methods[r.Method]
	if !ok {
		allow := make([]string, 0, len(methods))
		for m := range methods {
			allow = append(allow, m)
		}
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		a.writeError(w, errMethod(r.Method))
		return true
	}
	if a.Store == nil {
		a.writeError(w, a.internal("reaching the store", errors.New("the reliability API has no store")))
		return true
	}
	r = r.WithContext(context.WithValue(r.Context(), limitsKey{}, a.Limits))
	status, body, aerr := h(r, rc)
	if aerr != nil {
		if aerr.status == http.StatusRequestEntityTooLarge || aerr.status == http.StatusRequestTimeout {
			w.Header().Set("Connection", "close")
		}
		a.writeError(w, aerr)
		if aerr.status == http.StatusRequestEntityTooLarge {
			linger.Discard(w, r) // so that the client reads the 413
		}
		return true
	}
	a.writeJSON(w, status, body)
	return true
}

// IsAPIPath reports whether ServeHTTP serves path, so that a caller can
// pass other paths on before authenticating them.
func IsAPIPath(path string) bool {
	_, _, ok := (&API{}).route(path)
	return ok
}

// route finds the handlers of a path, by method, and the id it names.
func (a *API) route(path string) (map[string]handlerFunc, string, bool) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	for _, s := range seg {
		if s == "" {
			return nil, "", false
		}
	}
	get, post, patch := http.MethodGet, http.MethodPost, http.MethodPatch
	switch {
	case len(seg) == 1 && seg[0] == "feedback":
		return map[string]handlerFunc{post: a.createFeedback}, "", true
	case len(seg) == 1 && seg[0] == "operations":
		return map[string]handlerFunc{get: a.listOperations, post: a.createOperation}, "", true
	case len(seg) == 2 && seg[0] == "operations":
		return map[string]handlerFunc{get: a.getOperation, patch: a.patchOperation}, seg[1], true
	case len(seg) == 1 && seg[0] == "datasets":
		return map[string]handlerFunc{get: a.listDatasets, post: a.createDataset}, "", true
	case len(seg) == 2 && seg[0] == "datasets":
		return map[string]handlerFunc{get: a.getDataset}, seg[1], true
	case len(seg) == 3 && seg[0] == "datasets" && seg[2] == "items":
		return map[string]handlerFunc{get: a.listDatasetItems, post: a.addDatasetItems}, seg[1], true
	case len(seg) == 3 && seg[0] == "datasets" && seg[2] == "promote":
		return map[string]handlerFunc{post: a.promoteDataset}, seg[1], true
	case len(seg) == 3 && seg[0] == "datasets" && seg[2] == "training":
		return map[string]handlerFunc{post: a.createTrainingRequest}, seg[1], true
	case len(seg) == 1 && seg[0] == "evaluators":
		return map[string]handlerFunc{get: a.listEvaluators, post: a.createEvaluator}, "", true
	case len(seg) == 2 && seg[0] == "evaluators":
		return map[string]handlerFunc{get: a.getEvaluator, patch: a.patchEvaluator}, seg[1], true
	case len(seg) == 1 && seg[0] == "evaluations":
		return map[string]handlerFunc{get: a.listEvaluations, post: a.createEvaluation}, "", true
	case len(seg) == 2 && seg[0] == "evaluations":
		return map[string]handlerFunc{get: a.getEvaluation}, seg[1], true
	}
	return nil, "", false
}

// now is the API's clock.
func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

// log hands a message to the configured logger.
func (a *API) log(msg string, err error) {
	if a.Logger != nil {
		a.Logger(msg, err)
	}
}

// readObject reads the request body, which must be a JSON object.
func readObject(r *http.Request) (jsonObject, *apiError) {
	body, aerr := readBody(r)
	if aerr != nil {
		return jsonObject{}, aerr
	}
	obj, verr := parseObject(body)
	if verr != nil {
		return jsonObject{}, errBadRequest(&ValidationError{Code: CodeInvalidBody, Message: "the request body " + verr.Message})
	}
	return obj, nil
}

// readBody reads the request body under the request's Limits; it must be
// valid UTF-8, and within the JSON bounds. A body over the size limit is
// a 413 before more than the limit is read (before any of it when its
// Content-Length says so); one whose read time ran out (a net.Error
// timeout from below) is a 408.
func readBody(r *http.Request) ([]byte, *apiError) {
	if r.Body == nil {
		return nil, nil
	}
	l := requestLimits(r)
	if r.ContentLength > l.MaxBodyBytes {
		return nil, errTooLarge(l.MaxBodyBytes)
	}
	var body []byte
	var err error
	if r.ContentLength > 0 {
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, l.MaxBodyBytes+1))
		if err == nil && int64(len(body)) > l.MaxBodyBytes {
			return nil, errTooLarge(l.MaxBodyBytes)
		}
	}
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			return nil, &apiError{status: http.StatusRequestTimeout, typ: ErrorTypeInvalidRequest, code: "request_timeout",
				message: "the request body was not received in time"}
		}
		return nil, errBadRequest(&ValidationError{Code: CodeInvalidBody, Message: "the request body could not be read"})
	}
	if !utf8.Valid(body) {
		return nil, errBadRequest(invalidUTF8Body(body))
	}
	switch jsonlimit.Check(body, l.JSON) {
	case jsonlimit.TooDeep:
		return nil, errBadRequest(&ValidationError{Code: "json_too_deep",
			Message: fmt.Sprintf("the request body nests objects and arrays deeper than %d levels", l.JSON.MaxDepth)})
	case jsonlimit.TooManyMembers:
		return nil, errBadRequest(&ValidationError{Code: "json_too_large",
			Message: fmt.Sprintf("the request body holds more than %d values", l.JSON.MaxMembers)})
	}
	return body, nil
}

// errTooLarge is the 413 of a body over limit bytes.
func errTooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, typ: ErrorTypeInvalidRequest, code: "request_too_large",
		message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// invalidUTF8Body is the violation of a body that is not valid UTF-8. Raw
// bytes that are not UTF-8 would be stored as they came (free-form members
// such as input and config are kept as raw JSON) and served back in pages
// no client could parse, so they are refused here, before any parse. The
// violation names the string at fault; bad bytes outside every string make
// the body invalid JSON, reported as such. JSON escapes of lone surrogates
// ("\ud800") are ASCII text and pass, as they are valid JSON.
func invalidUTF8Body(body []byte) *ValidationError {
	param, ok := translate.InvalidUTF8Param(body)
	switch {
	case !ok:
		return &ValidationError{Code: CodeInvalidBody, Message: "the request body must be valid JSON"}
	case param == "":
		return &ValidationError{Code: CodeInvalidUTF8, Message: "the request body must be valid UTF-8 text"}
	}
	return &ValidationError{Param: param, Code: CodeInvalidUTF8, Message: "must be valid UTF-8 text"}
}

// pageQuery reads the shared list parameters limit (1 to 200, default 50)
// and cursor.
func pageQuery(r *http.Request) (PageQuery, *apiError) {
	q := r.URL.Query()
	p := PageQuery{Limit: DefaultPageLimit, Cursor: q.Get("cursor"), MaxBytes: requestLimits(r).MaxPageBytes}
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageLimit {
			return p, errBadRequest(invalid("limit", "must be an integer from 1 to %d", MaxPageLimit))
		}
		p.Limit = n
	}
	return p, nil
}

// writeJSON answers with v encoded as JSON.
func (a *API) writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		a.writeError(w, a.internal("encoding the response", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers with the error in the SPEC body.
func (a *API) writeError(w http.ResponseWriter, e *apiError) {
	body, err := json.Marshal(e.body())
	if err != nil {
		a.log("encoding an error response", err)
		body = []byte(`{"error":{"message":"internal error","type":"api_error","code":"internal_error","param":null}}`)
		e = &apiError{status: http.StatusInternalServerError}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// load reads a record named in the request and checks that it belongs to
// the org: an unknown id is a 404, another org's a 403, both naming param
// (empty for an id in the path).
func load[T any](a *API, rc reqCtx, kind, id, param string, get func(string) (T, error), owner func(T) string) (T, *apiError) {
	v, err := get(id)
	if err != nil {
		var zero T
		return zero, a.fromStore(err, "reading "+kind, param, kind, id)
	}
	if owner(v) != rc.orgID {
		var zero T
		return zero, errForbidden(param, "%s %s belongs to another organisation", kind, id)
	}
	return v, nil
}

// operationRef resolves an operation named in a body by id or key, as
// metadata.operation_id may name it: an id of another org is a 403, a
// reference to nothing a 404, both naming param.
func (a *API) operationRef(rc reqCtx, ref, param string) (Operation, *apiError) {
	op, err := a.Store.Operation(ref)
	if err == nil && op.OrgID != rc.orgID {
		return Operation{}, errForbidden(param, "operation %s belongs to another organisation", ref)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Operation{}, a.internal("reading operation", err)
	}
	op, err = a.Store.ResolveOperation(rc.orgID, ref)
	if err != nil {
		return Operation{}, a.fromStore(err, "resolving operation", param, "operation", ref)
	}
	return op, nil
}

// listResponse is a page in the SPEC list shape.
func listResponse[T any](p Page[T]) Page[T] {
	p.Object = ObjectList
	if p.Data == nil {
		p.Data = []T{}
	}
	return p
}
