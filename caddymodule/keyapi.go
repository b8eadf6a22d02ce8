package caddymodule

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/gateway/reliability"
)

// maxKeyRequestBytes bounds the body of POST /v1/keys.
const maxKeyRequestBytes = 64 << 10

// serveKeys serves the key endpoints of the reliability API to an org's
// admin key, for its own org only:
//
//	GET    /v1/keys                 list the org's keys (config keys on the first page)
//	POST   /v1/keys                 create one; the answer holds the key, once
//	GET    /v1/keys/{id}            one key
//	DELETE /v1/keys/{id}            revoke it: refused from the next request on
//	POST   /v1/keys/{id}/rotate     a new secret, once; the old one is refused
//
// A key that is not an admin key gets 403, as does a key id of another
// org; config keys are listed but not revoked or rotated here (409).
func (h *Reliability) serveKeys(w http.ResponseWriter, r *http.Request, seg []string) {
	if aerr := checkHeaderSize(r, h.app.limits.maxHeader); aerr != nil {
		writeError(w, aerr, false)
		return
	}
	defer armBodyTimeout(w, r, h.app.limits.bodyTimeout)()
	var allow string
	switch {
	case len(seg) == 0:
		allow = "GET, POST"
	case len(seg) == 1:
		allow = "DELETE, GET"
	case len(seg) == 2 && seg[1] == "rotate":
		allow = "POST"
	default:
		writeError(w, errNotFound("no such key endpoint: use /keys, /keys/{id} or /keys/{id}/rotate"), false)
		return
	}
	if !slices.Contains(strings.Split(allow, ", "), r.Method) {
		w.Header().Set("Allow", allow)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: "use " + allow}, false)
		return
	}
	p, aerr := h.app.principalOf(r)
	if aerr != nil {
		writeError(w, aerr, false)
		return
	}
	st := h.app.storeOrNil()
	if st == nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "api_error", code: "starting", message: errNotStarted.Error()}, false)
		return
	}
	if !p.admin {
		writeError(w, &apiError{status: http.StatusForbidden, typ: "permission_error", code: "admin_key_required",
			message: "only an admin key of the organisation may manage its keys; the operator creates one with `caddy llm keys create --org " + p.orgName + " --admin`"}, false)
		return
	}
	org := reliability.Org{ID: p.orgID, Name: p.orgName, Plan: p.plan}
	now := time.Now().UTC()
	var status int
	var body any
	if len(seg) == 0 {
		status, body, aerr = h.keysRoot(w, r, st, org, now)
	} else {
		status, body, aerr = h.keyByID(r, st, org, seg, now)
	}
	if aerr != nil {
		writeError(w, aerr, false)
		return
	}
	_ = h.writeJSONValue(w, status, body)
}

// keysRoot lists or creates the org's keys.
func (h *Reliability) keysRoot(w http.ResponseWriter, r *http.Request, st *reliability.BoltStore, org reliability.Org, now time.Time) (int, any, *apiError) {
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		pq, aerr := pageQuery(q.Get("limit"), q.Get("cursor"))
		if aerr != nil {
			return 0, nil, aerr
		}
		page, err := h.app.listKeys(st, org, pq, now)
		if err != nil {
			return 0, nil, h.keyError(err)
		}
		return http.StatusOK, listBody(page), nil
	}
	raw, aerr := readBody(w, r, maxKeyRequestBytes)
	if aerr != nil {
		return 0, nil, aerr
	}
	req, err := decodeKeyRequest(bytes.NewReader(raw))
	if err != nil {
		return 0, nil, &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_body", message: err.Error()}
	}
	if req.Org != "" && req.Org != org.Name && req.Org != org.ID {
		return 0, nil, errForbidden(fmt.Sprintf("an admin key manages the keys of its own organisation only, not of %q", req.Org))
	}
	if req.CreateOrg {
		return 0, nil, errInvalid("create_org", "create_org is for the operator's admin API; this key's organisation exists")
	}
	ans, err := h.app.createKey(st, org, req, now)
	if err != nil {
		return 0, nil, h.keyError(err)
	}
	ans.Org = org.Name
	return http.StatusCreated, ans, nil
}

// keyByID shows, revokes or rotates one of the org's keys.
func (h *Reliability) keyByID(r *http.Request, st *reliability.BoltStore, org reliability.Org, seg []string, now time.Time) (int, any, *apiError) {
	id := seg[0]
	rec, ck, err := h.app.findKey(st, id)
	if err != nil {
		return 0, nil, h.keyError(err)
	}
	if ck != nil {
		if ck.org != org.Name {
			return 0, nil, errForbidden(fmt.Sprintf("key %s belongs to another organisation", id))
		}
		if r.Method != http.MethodGet {
			return 0, nil, h.keyError(&errConfigKey{id: id, org: ck.org})
		}
		return http.StatusOK, keyAnswer{KeyInfo: configKeyInfo(st, *ck, org.ID), Org: org.Name}, nil
	}
	if rec.OrgID != org.ID {
		return 0, nil, errForbidden(fmt.Sprintf("key %s belongs to another organisation", id))
	}
	var ans keyAnswer
	switch {
	case r.Method == http.MethodGet:
		ans.KeyInfo, err = st.KeyInfo(rec.ID, now)
	case r.Method == http.MethodDelete:
		ans.KeyInfo, err = h.app.revokeKey(st, rec, now)
	default:
		ans, err = h.app.rotateKey(st, rec, now)
	}
	if err != nil {
		return 0, nil, h.keyError(err)
	}
	ans.Org = org.Name
	return http.StatusOK, ans, nil
}

// keyError is the SPEC error of a key operation's failure.
func (h *Reliability) keyError(err error) *apiError {
	var verr *reliability.ValidationError
	var cerr *errConfigKey
	switch {
	case errors.As(err, &verr):
		e := errInvalid(verr.Param, verr.Error())
		if verr.Code != "" {
			e.code = verr.Code
		}
		return e
	case errors.As(err, &cerr):
		return &apiError{status: http.StatusConflict, typ: "invalid_request_error", code: "config_key", message: cerr.Error()}
	case errors.Is(err, reliability.ErrNotFound):
		return errNotFound("no key has this id")
	case errors.Is(err, reliability.ErrConflict):
		return &apiError{status: http.StatusConflict, typ: "invalid_request_error", code: "key_not_active", message: err.Error()}
	case errors.Is(err, reliability.ErrBadCursor):
		return errInvalid("cursor", "cursor is not one this API returned")
	}
	return h.internal("managing keys", err)
}
