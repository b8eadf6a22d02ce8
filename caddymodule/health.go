package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/modelgate/gateway/routing"
)

func init() {
	caddy.RegisterModule(Health{})
	httpcaddyfile.RegisterHandlerDirective("llm_health", parseHealthDirective)
	httpcaddyfile.RegisterDirectiveOrder("llm_health", httpcaddyfile.Before, "reverse_proxy")
}

// Health is the `llm_health` HTTP handler: the gateway's liveness and
// readiness checks, for load balancers and orchestrators. GET (or HEAD)
// on LivenessPath answers 200 while the process serves requests. GET on
// ReadinessPath answers 200 when the gateway can take calls, and 503 when
// it cannot: the store is not open or does not answer a read, the call
// writer's queue is closed or full, or the background workers (the
// evaluation worker with the eval pass, the batch runner) are not
// running. Both answer JSON; the readiness body reports each check and
// each provider's health as the gateway's routing sees it (a provider
// whose paths all cool down after repeated failures is "down"). Providers
// do not decide readiness: every node shares the same upstreams, so taking
// a node out of rotation would not route around one. Requests for other
// paths go to the next handler.
type Health struct {
	// LivenessPath is the path of the liveness check. Default "/healthz".
	LivenessPath string `json:"liveness_path,omitempty"`
	// ReadinessPath is the path of the readiness check. Default "/readyz".
	ReadinessPath string `json:"readiness_path,omitempty"`

	app *App
}

// CaddyModule returns the Caddy module information.
func (Health) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_health",
		New: func() caddy.Module { return new(Health) },
	}
}

// Provision reaches the llm app whose state the checks report.
func (h *Health) Provision(ctx caddy.Context) error {
	if h.LivenessPath == "" {
		h.LivenessPath = "/healthz"
	}
	if h.ReadinessPath == "" {
		h.ReadinessPath = "/readyz"
	}
	appIface, err := ctx.App("llm")
	if err != nil {
		return fmt.Errorf("loading llm app: %w", err)
	}
	h.app = appIface.(*App)
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	live := r.URL.Path == h.LivenessPath
	if !live && r.URL.Path != h.ReadinessPath {
		return next.ServeHTTP(w, r)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: "use GET"}, false)
		return nil
	}
	w.Header().Set("Cache-Control", "no-store")
	if live {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
		return nil
	}
	rep := h.app.readiness(time.Now())
	body, err := json.Marshal(rep)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, fmt.Errorf("encoding the readiness report: %w", err))
	}
	status := http.StatusOK
	if rep.Status != statusReady {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, body)
	return nil
}

// parseHealthDirective parses:
//
//	llm_health [<liveness_path> [<readiness_path>]]
func parseHealthDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Health)
	h.Next()
	if h.NextArg() {
		m.LivenessPath = h.Val()
	}
	if h.NextArg() {
		m.ReadinessPath = h.Val()
	}
	if h.NextArg() || h.NextBlock(0) {
		return nil, h.ArgErr()
	}
	return m, nil
}

// Readiness statuses.
const (
	statusReady    = "ready"
	statusNotReady = "not_ready"
)

// Provider health states in the readiness report.
const (
	providerHealthy  = "healthy"
	providerDegraded = "degraded"
	providerDown     = "down"
)

// readiness is the body of the readiness check.
type readiness struct {
	// Status is "ready" or "not_ready".
	Status string `json:"status"`
	// Store is whether the store is open and answers a read.
	Store check `json:"store"`
	// CommitQueue is whether the call writer takes calls without blocking.
	CommitQueue queueCheck `json:"commit_queue"`
	// Workers is whether the background work runs.
	Workers workerCheck `json:"workers"`
	// Providers maps each enabled provider to its health.
	Providers map[string]providerHealth `json:"providers"`
}

// check is one readiness check; Error says why it failed.
type check struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// queueCheck is the call writer's queue: ready while it takes calls
// without blocking.
type queueCheck struct {
	check
	Depth    int `json:"depth"`
	Capacity int `json:"capacity"`
}

// workerCheck is the background work of the config.
type workerCheck struct {
	check
	// Evaluations is set while the evaluation worker (and the eval pass)
	// runs.
	Evaluations bool `json:"evaluations"`
	// EvalPassQueue and EvalPassCapacity are the calls waiting for the
	// eval pass and how many may wait.
	EvalPassQueue    int `json:"eval_pass_queue"`
	EvalPassCapacity int `json:"eval_pass_capacity"`
	// Batch is set while the batch runner runs (it starts and stops with
	// the evaluation worker); BatchQueue is its queue.
	Batch      bool `json:"batch"`
	BatchQueue int  `json:"batch_queue"`
}

// providerHealth is a provider's paths as routing sees them.
type providerHealth struct {
	// State is "healthy" (no path cooling down), "degraded" (some) or
	// "down" (all).
	State string `json:"state"`
	// Paths counts the provider's paths in the catalog; Failing those
	// that failed since their last success; CoolingDown those skipped for
	// now.
	Paths       int `json:"paths"`
	Failing     int `json:"failing"`
	CoolingDown int `json:"cooling_down"`
}

// readiness checks whether the config can take calls now. It takes no
// lock a starting store holds, so it answers at once.
func (a *App) readiness(now time.Time) readiness {
	rep := readiness{Providers: map[string]providerHealth{}}
	// The workers and shared state are set before the store is published
	// (open), so a loaded store means they can be read.
	st := a.rt.store.Load()
	switch {
	case st == nil:
		rep.Store.Error = "the store is not open"
	default:
		if err := st.Health(); err != nil {
			rep.Store.Error = err.Error()
		} else {
			rep.Store.OK = true
		}
		q := st.CommitQueue()
		rep.CommitQueue.Depth, rep.CommitQueue.Capacity = q.Pending, q.Capacity
		switch {
		case q.Closed:
			rep.CommitQueue.Error = "the call writer has stopped"
		case q.Pending >= q.Capacity:
			rep.CommitQueue.Error = "the call writer's queue is full: the disk is not keeping up"
		default:
			rep.CommitQueue.OK = true
		}
		a.workerReadiness(&rep.Workers)
		if rep.Store.OK {
			rep.Workers.BatchQueue = st.BatchQueueLen()
		}
		rep.Providers = a.providerHealth(now)
	}
	if rep.CommitQueue.Error == "" && !rep.CommitQueue.OK {
		rep.CommitQueue.Error = "the store is not open"
	}
	if rep.Workers.Error == "" && !rep.Workers.OK {
		rep.Workers.Error = "the store is not open"
	}
	rep.Status = statusNotReady
	if rep.Store.OK && rep.CommitQueue.OK && rep.Workers.OK {
		rep.Status = statusReady
	}
	return rep
}

// workerReadiness fills in the workers' check.
func (a *App) workerReadiness(wc *workerCheck) {
	if w := a.rt.worker; w != nil {
		wc.Evaluations = w.Running()
		wc.EvalPassQueue, wc.EvalPassCapacity = w.EvalPassQueue()
	}
	wc.Batch = a.rt.batch != nil && wc.Evaluations
	if !wc.Evaluations {
		wc.Error = "the background workers have stopped"
		return
	}
	wc.OK = true
}

// providerHealth reports each enabled provider's paths: how many there
// are, how many failed since their last success, how many cool down.
func (a *App) providerHealth(now time.Time) map[string]providerHealth {
	out := map[string]providerHealth{}
	paths := map[string]string{} // path key -> provider
	for _, p := range a.catalog.Providers() {
		out[p.Name] = providerHealth{State: providerHealthy}
	}
	for _, m := range a.catalog.Models() {
		for i := range m.Paths {
			key := routing.PathKey(routing.Candidate{Path: &m.Paths[i]})
			if _, seen := paths[key]; seen {
				continue
			}
			ph, ok := out[m.Paths[i].Provider]
			if !ok {
				continue
			}
			paths[key] = m.Paths[i].Provider
			ph.Paths++
			out[m.Paths[i].Provider] = ph
		}
	}
	if sh := a.rt.shared; sh != nil {
		for _, ps := range sh.health.Failing(now) {
			provider, ok := paths[ps.Key]
			if !ok {
				continue
			}
			ph := out[provider]
			ph.Failing++
			if !ps.CoolingUntil.IsZero() {
				ph.CoolingDown++
			}
			out[provider] = ph
		}
	}
	for name, ph := range out {
		switch {
		case ph.CoolingDown == 0:
		case ph.CoolingDown >= ph.Paths:
			ph.State = providerDown
		default:
			ph.State = providerDegraded
		}
		out[name] = ph
	}
	return out
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Health)(nil)
	_ caddyhttp.MiddlewareHandler = (*Health)(nil)
)
