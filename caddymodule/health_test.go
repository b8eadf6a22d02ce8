package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"
)

// startedApp starts an llm app with one provider and one model, on a
// store of its own, set up as Provision would (Provision itself needs a
// loaded config for the reload events it subscribes to).
func startedApp(t *testing.T) *App {
	t.Helper()
	a := &App{logger: zap.NewNop(), rt: new(runtimeState), storePath: filepath.Join(t.TempDir(), "gateway.db")}
	a.models = &modelCaller{app: a}
	var err error
	if a.limits, err = a.Limits.resolve(32 << 20); err != nil {
		t.Fatal(err)
	}
	if a.retention, err = a.Retention.resolve(); err != nil {
		t.Fatal(err)
	}
	a.catalog, _, err = buildCatalog([]ProviderConfig{{Name: "demo", Dialect: "openai", BaseURL: "http://127.0.0.1:9/v1"}},
		[]ModelConfig{{ID: "demo/demo-chat", InputPrice: 1, OutputPrice: 2}}, nil, time.Now().Unix())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	return a
}

// readyz answers GET /readyz through the llm_health handler.
func readyz(t *testing.T, a *App) (int, gjson.Result) {
	t.Helper()
	h := &Health{LivenessPath: "/healthz", ReadinessPath: "/readyz", app: a}
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		t.Fatal("the readiness check went to the next handler")
		return nil
	})
	if err := h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil), next); err != nil {
		t.Fatal(err)
	}
	return w.Code, gjson.ParseBytes(w.Body.Bytes())
}

// TestReadinessReportsAStoppedStore: a started app is ready; once its
// store is closed, the readiness check answers 503 and says the store
// and the commit queue are what fail; once the app stops, its workers
// report stopped too.
func TestReadinessReportsAStoppedStore(t *testing.T) {
	a := startedApp(t)
	status, body := readyz(t, a)
	if status != http.StatusOK || body.Get("status").String() != statusReady {
		t.Fatalf("started app: %d %s", status, body.Raw)
	}
	if got := body.Get("providers.demo.state").String(); got != providerHealthy {
		t.Errorf("provider demo is %q, want healthy: %s", got, body.Raw)
	}

	if err := a.rt.store.Load().Close(); err != nil {
		t.Fatal(err)
	}
	status, body = readyz(t, a)
	if status != http.StatusServiceUnavailable || body.Get("status").String() != statusNotReady {
		t.Fatalf("closed store: %d %s, want 503 not_ready", status, body.Raw)
	}
	if body.Get("store.ok").Bool() || body.Get("store.error").String() == "" {
		t.Errorf("closed store: store check %s, want failed with a reason", body.Get("store").Raw)
	}
	if body.Get("commit_queue.ok").Bool() {
		t.Errorf("closed store: commit queue check %s, want failed", body.Get("commit_queue").Raw)
	}

	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	status, body = readyz(t, a)
	if status != http.StatusServiceUnavailable || body.Get("workers.ok").Bool() || body.Get("workers.evaluations").Bool() {
		t.Fatalf("stopped app: %d %s, want 503 with the workers stopped", status, body.Raw)
	}
}

// TestReadinessBeforeStart: an app whose store is not open is not ready.
func TestReadinessBeforeStart(t *testing.T) {
	a := &App{rt: new(runtimeState)}
	rep := a.readiness(time.Now())
	if rep.Status != statusNotReady || rep.Store.OK || rep.Store.Error == "" {
		t.Fatalf("readiness before start = %+v, want not ready with the store's reason", rep)
	}
}

// TestLiveness: the liveness check answers 200 whatever the store.
func TestLiveness(t *testing.T) {
	h := &Health{LivenessPath: "/healthz", ReadinessPath: "/readyz", app: &App{rt: new(runtimeState)}}
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/healthz", nil), nil); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusOK {
		t.Fatalf("HEAD /healthz: %d", w.Code)
	}
}
