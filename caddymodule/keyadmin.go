package caddymodule

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// Key management, shared by Caddy's admin API (the operator, any org) and
// the /v1/keys endpoints (an org's admin key, its own org):
//
//	GET    /llm/keys?org=NAME[&limit=N&cursor=C]  -> 200 list of keys (never the secrets)
//	POST   /llm/keys  {"org", "create_org", "name", "admin", "expires_in"|"expires_at",
//	                   "budget": {"day_usd", "month_usd"}, "models": [...]}
//	       -> 201 the key, with "key" (shown this once)
//	GET    /llm/keys/{id}         -> 200 the key
//	DELETE /llm/keys/{id}         -> 200 the key, revoked
//	POST   /llm/keys/{id}/rotate  -> 200 the key, with its new "key"
//
// Keys declared in the config are listed too (source "config", id
// "key_cfg_" and 12 hex digits of their hash), but they are revoked or
// rotated by editing the config and reloading: those requests answer 409.

// keyRequest is the body that creates a key.
type keyRequest struct {
	// Org names the org (admin API); /v1/keys uses the caller's.
	Org string `json:"org,omitempty"`
	// CreateOrg creates the org when there is none of that name; without
	// it an unknown org is an error (a mistyped name must not create one).
	CreateOrg bool `json:"create_org,omitempty"`
	// Name labels the key.
	Name string `json:"name,omitempty"`
	// Admin lets the key manage its org's keys over /v1/keys.
	Admin bool `json:"admin,omitempty"`
	// ExpiresIn is the key's lifetime from now, a duration such as "720h"
	// or "30d".
	ExpiresIn string `json:"expires_in,omitempty"`
	// ExpiresAt is when the key stops working (RFC 3339).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Budget caps what the key's calls cost per UTC day and month.
	Budget *reliability.KeyBudget `json:"budget,omitempty"`
	// Models limits the key to these models (within its org's).
	Models []string `json:"models,omitempty"`
}

// keyAnswer is a key in an answer: its list entry, its org's name and,
// once, right after it is created or rotated, the key itself.
type keyAnswer struct {
	reliability.KeyInfo
	// Org is the org's name.
	Org string `json:"org,omitempty"`
	// Key is the secret, only in the answer that created or rotated it.
	Key string `json:"key,omitempty"`
}

// errConfigKey is a change asked of a key declared in the config.
type errConfigKey struct{ id, org string }

func (e *errConfigKey) Error() string {
	return fmt.Sprintf("key %s is declared in the config (org %q): remove it from the config and reload to revoke it, and add a new one there to replace it", e.id, e.org)
}

// decodeKeyRequest reads a key request body, refusing unknown members.
func decodeKeyRequest(body io.Reader) (keyRequest, error) {
	var req keyRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return keyRequest{}, fmt.Errorf("decoding the key request: %w", err)
	}
	if dec.More() {
		return keyRequest{}, errors.New("decoding the key request: more than one JSON value")
	}
	return req, nil
}

// keyOptions checks a key request for org orgName and turns it into store
// options; its errors name the member at fault.
func (a *App) keyOptions(req keyRequest, orgName string, now time.Time) (reliability.KeyOptions, *reliability.ValidationError) {
	opt := reliability.KeyOptions{Name: req.Name, Admin: req.Admin, ExpiresAt: req.ExpiresAt, Budget: req.Budget, Models: req.Models}
	if req.ExpiresIn != "" {
		if req.ExpiresAt != nil {
			return opt, &reliability.ValidationError{Param: "expires_in", Code: reliability.CodeInvalidValue, Message: "give expires_in or expires_at, not both"}
		}
		d, err := caddy.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return opt, &reliability.ValidationError{Param: "expires_in", Code: reliability.CodeInvalidValue,
				Message: fmt.Sprintf("%q is not a positive duration such as \"720h\" or \"30d\"", req.ExpiresIn)}
		}
		at := now.Add(d)
		opt.ExpiresAt = &at
	}
	orgModels := a.orgModels[orgName]
	for i, m := range req.Models {
		_, err := a.catalog.Model(m)
		_, isRouter := a.catalog.Router(m)
		_, isOff := a.offModels[m]
		param := fmt.Sprintf("models[%d]", i)
		switch {
		case err != nil && !isRouter && !isOff:
			return opt, &reliability.ValidationError{Param: param, Code: reliability.CodeInvalidValue, Message: fmt.Sprintf("no model has the id %q", m)}
		case orgModels != nil && !orgModels[m]:
			return opt, &reliability.ValidationError{Param: param, Code: reliability.CodeInvalidValue,
				Message: fmt.Sprintf("org %q may not use model %q, so no key of it may", orgName, m)}
		}
	}
	return opt, nil
}

// createKey issues a key for org from a checked request.
func (a *App) createKey(st *reliability.BoltStore, org reliability.Org, req keyRequest, now time.Time) (keyAnswer, error) {
	opt, verr := a.keyOptions(req, org.Name, now)
	if verr != nil {
		return keyAnswer{}, verr
	}
	key, rec, err := st.CreateKeyWith(org.ID, a.KeyPrefix, opt)
	if err != nil {
		return keyAnswer{}, err
	}
	a.logger.Info("API key created", zap.String("org", org.Name), zap.String("id", rec.ID), zap.String("hint", rec.Hint),
		zap.Bool("admin", rec.Admin))
	return keyAnswer{KeyInfo: rec.Info(now, nil), Org: org.Name, Key: key}, nil
}

// configKey is a key declared in the config.
type configKey struct {
	hash [32]byte
	org  string
	hint string // "" for a key given by its hash
}

// configKeysOf lists the keys the config declares for the org named org
// ("" for every org), in config order.
func (a *App) configKeysOf(org string) []configKey {
	var out []configKey
	seen := map[[32]byte]bool{}
	for _, oc := range a.Orgs {
		if org != "" && oc.Name != org {
			continue
		}
		for _, k := range oc.Keys {
			if h := reliability.HashKey(k); !seen[h] {
				seen[h] = true
				out = append(out, configKey{hash: h, org: oc.Name, hint: reliability.KeyHint(k)})
			}
		}
		for _, hx := range oc.KeyHashes {
			b, err := hex.DecodeString(hx)
			if err != nil || len(b) != 32 {
				continue // Provision refused such a config
			}
			if h := [32]byte(b); !seen[h] {
				seen[h] = true
				out = append(out, configKey{hash: h, org: oc.Name})
			}
		}
	}
	return out
}

// configKeyInfo is the list entry of a config key of the org orgID.
func configKeyInfo(st *reliability.BoltStore, ck configKey, orgID string) reliability.KeyInfo {
	id := configKeyID(ck.hash)
	last, _ := st.KeyLastUsed(id)
	prefix, _, _ := strings.Cut(ck.hint, "_live_")
	return reliability.KeyInfo{Object: reliability.ObjectAPIKey, ID: id, OrgID: orgID, Prefix: prefix, Hint: ck.hint,
		Source: reliability.KeySourceConfig, State: reliability.KeyActive, LastUsedAt: last, Models: []string{}}
}

// listKeys lists the org's keys: on the first page the config's keys,
// then the stored keys newest first, a page of q at a time (config keys do
// not count against the page's limit).
func (a *App) listKeys(st *reliability.BoltStore, org reliability.Org, q reliability.PageQuery, now time.Time) (reliability.Page[reliability.KeyInfo], error) {
	page, err := st.ListKeys(org.ID, q, now)
	if err != nil {
		return page, err
	}
	if q.Cursor == "" {
		var cfg []reliability.KeyInfo
		for _, ck := range a.configKeysOf(org.Name) {
			cfg = append(cfg, configKeyInfo(st, ck, org.ID))
		}
		page.Data = append(cfg, page.Data...)
	}
	return page, nil
}

// findKey returns the stored key with this id, or the config key with
// this id, or an error wrapping reliability.ErrNotFound.
func (a *App) findKey(st *reliability.BoltStore, id string) (reliability.APIKey, *configKey, error) {
	if isConfigKeyID(id) {
		for _, ck := range a.configKeysOf("") {
			if configKeyID(ck.hash) == id {
				return reliability.APIKey{}, &ck, nil
			}
		}
		return reliability.APIKey{}, nil, fmt.Errorf("key %s: %w", id, reliability.ErrNotFound)
	}
	rec, err := st.KeyByID(id)
	return rec, nil, err
}

// orgIDOf is the id of the org named name, "" when it is unknown.
func (a *App) orgIDOf(name string) string {
	if id, ok := a.rt.orgIDs.Load(name); ok {
		return id.(string)
	}
	return ""
}

// revokeKey revokes a stored key and logs it.
func (a *App) revokeKey(st *reliability.BoltStore, rec reliability.APIKey, now time.Time) (reliability.KeyInfo, error) {
	rec, err := st.RevokeKey(rec.ID, now)
	if err != nil {
		return reliability.KeyInfo{}, err
	}
	a.logger.Info("API key revoked", zap.String("org_id", rec.OrgID), zap.String("id", rec.ID), zap.String("hint", rec.Hint))
	return st.KeyInfo(rec.ID, now)
}

// rotateKey gives a stored key a new secret and logs it.
func (a *App) rotateKey(st *reliability.BoltStore, rec reliability.APIKey, now time.Time) (keyAnswer, error) {
	key, rec, err := st.RotateKey(rec.ID, a.KeyPrefix, now)
	if err != nil {
		return keyAnswer{}, err
	}
	a.logger.Info("API key rotated", zap.String("org_id", rec.OrgID), zap.String("id", rec.ID), zap.String("hint", rec.Hint))
	info, err := st.KeyInfo(rec.ID, now)
	if err != nil {
		return keyAnswer{}, err
	}
	return keyAnswer{KeyInfo: info, Key: key}, nil
}

// keysUnknownOrgMessage says that no org has the name, which orgs exist, and
// how to create it.
func keysUnknownOrgMessage(st *reliability.BoltStore, name string) string {
	known, _ := st.OrgNames()
	list := "none"
	if len(known) > 0 {
		if len(known) > 20 {
			known = append(known[:20:20], fmt.Sprintf("and %d more", len(known)-20))
		}
		list = strings.Join(known, ", ")
	}
	return fmt.Sprintf("org %q does not exist (known orgs: %s); to create it with the key, pass --create-org (\"create_org\": true)", name, list)
}

// keyAdminError is a caddy.APIError with the status err calls for.
func keyAdminError(err error) error {
	var verr *reliability.ValidationError
	var cerr *errConfigKey
	switch {
	case errors.As(err, &verr):
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: verr}
	case errors.As(err, &cerr):
		return caddy.APIError{HTTPStatus: http.StatusConflict, Err: cerr}
	case errors.Is(err, reliability.ErrNotFound):
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: err}
	case errors.Is(err, reliability.ErrConflict):
		return caddy.APIError{HTTPStatus: http.StatusConflict, Err: err}
	case errors.Is(err, reliability.ErrBadCursor), errors.Is(err, reliability.ErrBadLimit):
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: err}
	}
	return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err}
}

// handleKeys serves /llm/keys: GET lists an org's keys, POST creates one.
func handleKeys(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed")}
	}
	a, err := runningApp()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	st := a.storeOrNil()
	now := time.Now().UTC()
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		name := q.Get("org")
		if name == "" {
			return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: errors.New("the org query parameter is required: GET /llm/keys?org=NAME")}
		}
		org, err := st.OrgByName(name)
		if errors.Is(err, reliability.ErrNotFound) {
			return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New(keysUnknownOrgMessage(st, name))}
		}
		if err != nil {
			return keyAdminError(err)
		}
		pq, aerr := pageQuery(q.Get("limit"), q.Get("cursor"))
		if aerr != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: aerr}
		}
		page, err := a.listKeys(st, org, pq, now)
		if err != nil {
			return keyAdminError(err)
		}
		return writeAdminJSON(w, http.StatusOK, listBody(page))
	}
	req, err := decodeKeyRequest(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: err}
	}
	if req.Org == "" || len(req.Org) > 256 {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("org must be a name of 1 to 256 characters")}
	}
	org, err := st.OrgByName(req.Org)
	switch {
	case errors.Is(err, reliability.ErrNotFound) && req.CreateOrg:
		if org, err = st.EnsureOrg(req.Org); err != nil {
			return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("creating org: %v", err)}
		}
		a.logger.Info("org created", zap.String("org", org.Name), zap.String("id", org.ID))
	case errors.Is(err, reliability.ErrNotFound):
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New(keysUnknownOrgMessage(st, req.Org))}
	case err != nil:
		return keyAdminError(err)
	}
	ans, err := a.createKey(st, org, req, now)
	if err != nil {
		return keyAdminError(err)
	}
	return writeAdminJSON(w, http.StatusCreated, ans)
}

// handleKey serves /llm/keys/{id} (GET, DELETE revokes) and
// /llm/keys/{id}/rotate (POST).
func handleKey(w http.ResponseWriter, r *http.Request) error {
	rest := strings.TrimPrefix(r.URL.Path, "/llm/keys/")
	id, action, _ := strings.Cut(rest, "/")
	if id == "" || (action != "" && action != "rotate") || strings.Contains(action, "/") {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("no such route: use /llm/keys/{id} or /llm/keys/{id}/rotate")}
	}
	allowed := "GET, DELETE"
	if action == "rotate" {
		allowed = "POST"
	}
	if !slices.Contains(strings.Split(allowed, ", "), r.Method) {
		w.Header().Set("Allow", allowed)
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed; use %s", allowed)}
	}
	a, err := runningApp()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	st := a.storeOrNil()
	now := time.Now().UTC()
	rec, ck, err := a.findKey(st, id)
	if err != nil {
		return keyAdminError(err)
	}
	if ck != nil {
		if r.Method != http.MethodGet {
			return keyAdminError(&errConfigKey{id: id, org: ck.org})
		}
		return writeAdminJSON(w, http.StatusOK, keyAnswer{KeyInfo: configKeyInfo(st, *ck, a.orgIDOf(ck.org)), Org: ck.org})
	}
	var ans keyAnswer
	switch {
	case r.Method == http.MethodGet:
		ans.KeyInfo, err = st.KeyInfo(rec.ID, now)
	case r.Method == http.MethodDelete:
		ans.KeyInfo, err = a.revokeKey(st, rec, now)
	default:
		ans, err = a.rotateKey(st, rec, now)
	}
	if err != nil {
		return keyAdminError(err)
	}
	if org, err := st.Org(rec.OrgID); err == nil {
		ans.Org = org.Name
	}
	return writeAdminJSON(w, http.StatusOK, ans)
}

// keyAdminErrorMessage is the message of an admin API error body
// ({"error": "..."}) inside an error text, or the text itself.
func keyAdminErrorMessage(text string) string {
	if i := strings.Index(text, "{"); i >= 0 {
		var body struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(bytes.TrimSpace([]byte(text[i:])), &body) == nil && body.Error != "" {
			return body.Error
		}
	}
	return text
}
