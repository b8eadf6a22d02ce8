// Package integration runs the gateway as a real Caddy, configured from a
// Caddyfile, with the demo upstream as a real HTTP hop, and drives it with
// the official SDKs and raw HTTP. Caddy's state is global to the process, so
// the tests here run one after another.
package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/tidwall/gjson"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/modelgate/gateway/caddymodule"
)

const (
	demoKey  = "mg_live_demo0000000000000000000000"
	otherKey = "mg_live_other000000000000000000000"
)

// gateway is a running Caddy with the gateway on it.
type gateway struct {
	t        *testing.T
	base     string // http://127.0.0.1:<port>/v1
	admin    string // 127.0.0.1:<port>
	upstream string // http://127.0.0.1:<port>
	dir      string
	store    string
	vars     map[string]string
}

// handedOut holds the ports freePort gave out, so that one gateway's
// addresses never coincide (the kernel may offer a just-closed port again).
var handedOut sync.Map

func freePort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, dup := handedOut.LoadOrStore(port, true); !dup {
			return port
		}
	}
}

// defaultConfig is the test Caddyfile: the demo upstream on its own port
// (once healthy, once always failing with 503), OpenAI- and Anthropic-dialect
// providers on it, and two orgs.
const defaultConfig = `{
	admin {{ADMIN}}
	persist_config off
	log {
		output discard
	}
	llm {
		store {{STORE}}
		sales_email sales@gateway.test
		smtp {{SMTP}} {
			from gateway@gateway.test
		}
		org demo {
			key ` + demoKey + `
		}
		org other {
			key ` + otherKey + `
			models demo/demo-chat
		}
		provider demo {
			dialect openai
			base_url {{UPSTREAM}}/v1
		}
		provider demo-anthropic {
			dialect anthropic
			base_url {{UPSTREAM}}/v1
		}
		provider broken {
			dialect openai
			base_url {{BROKEN}}/v1
		}
		provider slow {
			dialect openai
			base_url {{SLOW}}/v1
			response_header_timeout 300ms
		}
		provider down {
			dialect openai
			base_url http://127.0.0.1:{{DOWNPORT}}/v1
			dial_timeout 1s
		}
		model demo/demo-chat {
			price 0.5 1.5
		}
		model demo/demo-mini {
			price 0.1 0.2
		}
		model demo-anthropic/demo-claude {
			price 0.8 4
		}
		model demo/demo-embed {
			embedding
			price 0.02 0
		}
		model demo/fallback-chat {
			price 1 2
			path down demo-chat
			path broken demo-chat
			path slow demo-chat
			path demo demo-chat
		}
		model demo/only-broken {
			price 1 2
			path broken demo-chat
		}
		model demo/realtime-only {
			price 1 2
			path demo demo-chat {
				tiers realtime
			}
		}
		{{EXTRA_MODELS}}
		{{EXTRA_LLM}}
	}
}

http://127.0.0.1:{{PORT}} {
	log {
		output file {{ACCESSLOG}}
		format json
	}
	log_append llm_provider {http.llm.provider}
	log_append llm_cost {http.llm.cost_usd}
	route /v1/* {
		llm_gateway
		llm_reliability
		header Content-Type application/json
		respond ` + "`" + `{"error":{"message":"unknown endpoint","type":"invalid_request_error","code":"not_found","param":null}}` + "`" + ` 404
	}
}

{{UPSTREAM_SITE}}

{{BROKEN}} {
	llm_demo_upstream {
		fail_status 503
	}
}

{{SLOW}} {
	llm_demo_upstream {
		latency 2s
	}
}
`

// startGateway loads the test Caddyfile into the process's Caddy, with the
// strict demo upstream served by the same Caddy.
func startGateway(t *testing.T) *gateway {
	t.Helper()
	return startGatewayWith(t, "")
}

// startGatewayWith loads the test Caddyfile; a non-empty upstream is the
// base address of a demo upstream outside Caddy, which reloads leave alone.
func startGatewayWith(t *testing.T, upstream string) *gateway {
	t.Helper()
	return startGatewayOpts(t, gatewayOpts{upstream: upstream})
}

// gatewayOpts vary the test Caddyfile.
type gatewayOpts struct {
	// upstream is the base address of a demo upstream outside Caddy.
	upstream string
	// smtp is the relay for the sales email (default: a closed port).
	smtp string
	// llm is more lines for the global llm block (orgs, models, routers).
	llm string
	// store reuses a store file (default: a new one).
	store string
}

// startGatewayOpts loads the test Caddyfile with the given options.
func startGatewayOpts(t *testing.T, o gatewayOpts) *gateway {
	t.Helper()
	upstream := o.upstream
	dir := t.TempDir()
	g := &gateway{t: t, dir: dir, store: filepath.Join(dir, "data", "gateway.db")}
	port := freePort(t)
	adminPort := freePort(t)
	g.base = fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	g.admin = fmt.Sprintf("127.0.0.1:%d", adminPort)
	g.upstream = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	g.vars = map[string]string{
		"{{ADMIN}}":        g.admin,
		"{{STORE}}":        g.store,
		"{{PORT}}":         fmt.Sprint(port),
		"{{UPSTREAM}}":     g.upstream,
		"{{BROKEN}}":       fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
		"{{SLOW}}":         fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
		"{{DOWNPORT}}":     fmt.Sprint(freePort(t)),
		"{{ACCESSLOG}}":    filepath.Join(dir, "access.log"),
		"{{EXTRA_MODELS}}": "",
		"{{SMTP}}":         o.smtp,
	}
	if o.smtp == "" {
		g.vars["{{SMTP}}"] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	g.vars["{{UPSTREAM_SITE}}"] = g.upstream + " {\n\tllm_demo_upstream {\n\t\tstrict\n\t}\n}\n"
	if upstream != "" {
		g.upstream = upstream
		g.vars["{{UPSTREAM}}"] = upstream
		g.vars["{{UPSTREAM_SITE}}"] = ""
	}
	g.vars["{{EXTRA_LLM}}"] = o.llm
	if o.store != "" {
		g.store = o.store
		g.vars["{{STORE}}"] = o.store
	}
	g.load("")
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
	return g
}

// load adapts and loads the config; extra is added to the model list, so
// that each load is a real change (a reload).
func (g *gateway) load(extra string) {
	g.t.Helper()
	src := defaultConfig
	vars := g.vars
	vars["{{EXTRA_MODELS}}"] = extra
	// Blocks that hold other placeholders go in first.
	for _, k := range []string{"{{UPSTREAM_SITE}}", "{{EXTRA_LLM}}", "{{EXTRA_MODELS}}"} {
		src = strings.ReplaceAll(src, k, vars[k])
	}
	for k, v := range vars {
		src = strings.ReplaceAll(src, k, v)
	}
	cfg, warn, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(src), nil)
	if err != nil {
		g.t.Fatalf("adapting Caddyfile: %v", err)
	}
	_ = warn // formatting hints only
	if err := caddy.Load(cfg, true); err != nil {
		g.t.Fatalf("loading config: %v", err)
	}
	g.waitReady()
}

func (g *gateway) waitReady() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(g.base + "/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatal("gateway did not come up")
}

// do sends a request with the given key ("" for none) and returns status and body.
func (g *gateway) do(method, path, key string, body any) (int, []byte, http.Header) {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp.StatusCode, out, resp.Header
}

// post sends a JSON body with the demo key and expects the status.
func (g *gateway) post(path string, body any, want int) gjson.Result {
	g.t.Helper()
	status, out, _ := g.do(http.MethodPost, path, demoKey, body)
	if status != want {
		g.t.Fatalf("POST %s: status %d, want %d: %.600s", path, status, want, out)
	}
	return gjson.ParseBytes(out)
}

// get sends a GET with the demo key and expects the status.
func (g *gateway) get(path string, want int) gjson.Result {
	g.t.Helper()
	status, out, _ := g.do(http.MethodGet, path, demoKey, nil)
	if status != want {
		g.t.Fatalf("GET %s: status %d, want %d: %.600s", path, status, want, out)
	}
	return gjson.ParseBytes(out)
}

// assertSpecError checks the SPEC error body.
func assertSpecError(t *testing.T, body []byte, typ, param string) {
	t.Helper()
	e := gjson.GetBytes(body, "error")
	if !e.IsObject() || e.Get("message").String() == "" {
		t.Fatalf("not a SPEC error body: %s", body)
	}
	if typ != "" && e.Get("type").String() != typ {
		t.Fatalf("error type %q, want %q: %s", e.Get("type").String(), typ, body)
	}
	if param != "-" {
		got := e.Get("param")
		if param == "" && got.Type != gjson.Null {
			t.Fatalf("error param %s, want null: %s", got.Raw, body)
		}
		if param != "" && got.String() != param {
			t.Fatalf("error param %q, want %q: %s", got.String(), param, body)
		}
	}
}

func TestMain(m *testing.M) {
	// The in-process Caddy keeps its data (autosave, locks) under here.
	dir, err := os.MkdirTemp("", "gateway-it-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
