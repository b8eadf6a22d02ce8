package caddymodule

import (
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/modelgate/gateway/demoupstream"
)

func init() {
	caddy.RegisterModule(DemoUpstream{})
}

// DemoUpstream is the `llm_demo_upstream` HTTP handler: a deterministic
// model server speaking the OpenAI and Anthropic dialects. It is the
// embedded default upstream and the upstream of the tests: a real HTTP hop.
type DemoUpstream struct {
	// Strict rejects unknown request fields, as the real APIs do.
	Strict bool `json:"strict,omitempty"`
	// APIKey, when set, is the credential the demo server requires.
	APIKey string `json:"api_key,omitempty"`
	// FailStatus makes every model call fail with this status (to exercise
	// fallback).
	FailStatus int `json:"fail_status,omitempty"`
	// Latency is added before every response.
	Latency caddy.Duration `json:"latency,omitempty"`

	handler http.Handler
}

// CaddyModule returns the Caddy module information.
func (DemoUpstream) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_demo_upstream",
		New: func() caddy.Module { return new(DemoUpstream) },
	}
}

// Provision builds the demo server.
func (d *DemoUpstream) Provision(caddy.Context) error {
	d.handler = demoupstream.New(demoupstream.Config{
		Strict: d.Strict, APIKey: d.APIKey, FailStatus: d.FailStatus, Latency: time.Duration(d.Latency),
	})
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler; it always answers.
func (d *DemoUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	d.handler.ServeHTTP(w, r)
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*DemoUpstream)(nil)
	_ caddyhttp.MiddlewareHandler = (*DemoUpstream)(nil)
)
