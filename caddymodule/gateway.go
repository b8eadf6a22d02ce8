package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/internal/linger"
	"github.com/modelgate/gateway/translate"
)

func init() {
	caddy.RegisterModule(Gateway{})
}

// Gateway is the `llm_gateway` HTTP handler: GET /models, the model calls
// POST /chat/completions, /messages, /responses and /embeddings, and
// POST /messages/count_tokens. Requests for other paths go to the next
// handler; when no handler after it answers one (Caddy would send an empty
// 200), the gateway answers a JSON 404 that says where the API is, since a
// client whose base URL lacks or doubles the version segment would
// otherwise read an empty success.
type Gateway struct {
	// Prefix is the path prefix the endpoints live under. Default "/v1".
	Prefix string `json:"prefix,omitempty"`

	app       *App
	upstreams map[string]*upstream
	logger    *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_gateway",
		New: func() caddy.Module { return new(Gateway) },
	}
}

// Provision reaches the llm app and builds one reverse proxy per enabled
// provider.
func (g *Gateway) Provision(ctx caddy.Context) error {
	g.logger = ctx.Logger()
	if g.Prefix == "" {
		g.Prefix = "/v1"
	}
	appIface, err := ctx.App("llm")
	if err != nil {
		return fmt.Errorf("loading llm app: %w", err)
	}
	g.app = appIface.(*App)
	g.app.models.gateway.Store(g)
	g.upstreams = map[string]*upstream{}
	for _, pc := range g.app.Providers {
		p, ok := g.app.catalog.Provider(pc.Name)
		if !ok {
			continue // switched off
		}
		u, err := newUpstream(ctx, p, pc)
		if err != nil {
			return err
		}
		g.upstreams[p.Name] = u
	}
	return nil
}

// Cleanup releases the reverse proxies.
func (g *Gateway) Cleanup() error {
	for _, u := range g.upstreams {
		if err := u.proxy.Cleanup(); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	start := time.Now()
	g.app.markDraining(w)
	rest, ok := strings.CutPrefix(r.URL.Path, g.Prefix)
	if !ok {
		return g.passOn(w, r, next)
	}
	var d translate.Dialect
	switch rest {
	case "/chat/completions":
		d = translate.Chat
	case "/messages":
		d = translate.Messages
	case "/responses":
		d = translate.Responses
	case "/embeddings":
		d = translate.Embeddings
	case "/messages/count_tokens":
		g.serveCountTokens(w, r)
		return nil
	case "/models":
		if r.Method != http.MethodGet {
			return g.passOn(w, r, next)
		}
		p, aerr := g.app.principalOf(r)
		if aerr != nil {
			writeError(w, aerr, false)
			return nil
		}
		g.serveModels(w, p)
		return nil
	default:
		return g.passOn(w, r, next)
	}
	anthropic := d == translate.Messages
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: "use POST"}, anthropic)
		return nil
	}
	if aerr := checkHeaderSize(r, g.app.limits.maxHeader); aerr != nil {
		writeError(w, aerr, anthropic)
		return nil
	}
	p, aerr := g.app.principalOf(r)
	if aerr != nil {
		writeError(w, aerr, anthropic)
		return nil
	}
	if aerr := g.app.checkRateLimit(w, p); aerr != nil {
		writeError(w, aerr, anthropic)
		return nil
	}
	release, aerr := g.app.acquireCallSlot(w, p)
	if aerr != nil {
		observeRejection(aerr.code)
		writeError(w, aerr, anthropic)
		return nil
	}
	defer release()
	stopBody := armBodyTimeout(w, r, g.app.limits.bodyTimeout)
	body, aerr := readBody(w, r, g.app.limits.bodyLimit(d))
	stopBody()
	if aerr == nil {
		aerr = g.app.limits.checkShape(body)
	}
	if aerr != nil {
		if anthropic && aerr.status == http.StatusRequestEntityTooLarge {
			aerr.typ = "request_too_large" // the type Anthropic's API answers 413 with
		}
		writeError(w, aerr, anthropic)
		if aerr.status == http.StatusRequestEntityTooLarge {
			linger.Discard(w, r) // so that the client reads the 413
		}
		return nil
	}
	c, aerr := g.newCall(r, p, d, body, start)
	if aerr != nil {
		writeError(w, aerr, anthropic)
		return nil
	}
	defer c.reservation.Release()
	c.serve(w, r)
	return nil
}

// principalOf authenticates the request's bearer token or x-api-key header.
func (a *App) principalOf(r *http.Request) (*principal, *apiError) {
	key := ""
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return nil, errUnauthorized("the Authorization header must be \"Bearer <API key>\"")
		}
		key = strings.TrimSpace(token)
	} else {
		key = r.Header.Get("X-Api-Key")
	}
	if key == "" {
		return nil, errUnauthorized("no API key: send \"Authorization: Bearer <API key>\" or \"x-api-key\"")
	}
	p, err := a.authenticate(key)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, errBadKey):
		return nil, errUnauthorized(unauthorizedMessage(err))
	case errors.Is(err, errNotStarted):
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "api_error", code: "starting", message: err.Error()}
	default:
		a.logger.Error("authenticating", zap.Error(err))
		return nil, errInternal("could not check the API key")
	}
}

// serveModels answers GET /models with the models the org may use.
func (g *Gateway) serveModels(w http.ResponseWriter, p *principal) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"object":"list","data":[`...)
	n := 0
	for _, m := range g.app.catalog.Models() {
		if !p.mayUse(m.ID) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"id":`...)
		b = translate.AppendJSONString(b, m.ID)
		b = append(b, `,"object":"model","created":`...)
		b = appendInt(b, g.app.catalog.Created)
		b = append(b, `,"owned_by":`...)
		b = translate.AppendJSONString(b, m.OwnedBy)
		if m.Description != "" {
			b = append(b, `,"description":`...)
			b = translate.AppendJSONString(b, m.Description)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddy.CleanerUpper          = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
)
