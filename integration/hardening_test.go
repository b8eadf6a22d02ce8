package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/demoupstream"
)

// loadCaddyfile adapts src and loads it into the process's Caddy, which
// the test's cleanup stops. It returns the adapted JSON.
func loadCaddyfile(t *testing.T, src string) []byte {
	t.Helper()
	cfg, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(src), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v\n%s", err, src)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("loading config: %v", err)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
	return cfg
}

// waitUp polls base+"/models" until the gateway answers 401 (up, no key).
func waitUp(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/models"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("gateway did not come up")
}

// send posts body to url with the given headers and returns status,
// headers and body.
func send(t *testing.T, client *http.Client, url string, header http.Header, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// TestSecretsNeverLogged exercises every path that used to write a
// credential somewhere (plain and streamed calls with the key in
// Authorization and in x-api-key, streams the upstream cuts, upstream
// refusals that quote the provider's key, a client sending a foreign key,
// the reliability API) and then reads every log line at every level, the
// admin API's config and the autosave: no client key, provider key,
// configured secret header or provider account id is in any of them.
func TestSecretsNeverLogged(t *testing.T) {
	const (
		clientKey    = "mg_live_secretclient0000000000000000"
		foreignKey   = "sk-ant-api03-foreignKEYsentbymistake0123456789"
		openaiKey    = "sk-proj-OPENAIprovidercredential0123456789"
		anthropicKey = "sk-ant-api03-ANTHROPICprovidercredential01234"
		teamKey      = "team-header-secret-value-0123456789"
		orgID        = "org-PROVIDERaccount123456"
	)
	t.Setenv("GW_IT_OPENAI_KEY", openaiKey)
	t.Setenv("GW_IT_ANTHROPIC_KEY", anthropicKey)
	t.Setenv("GW_IT_TEAM_KEY", teamKey)

	mux := http.NewServeMux()
	oa := demoupstream.New(demoupstream.Config{APIKey: openaiKey})
	mux.Handle("/oa/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Team-Key") != teamKey {
			http.Error(w, `{"error":{"message":"no team key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		oa.ServeHTTP(w, r)
	}))
	mux.Handle("/an/", demoupstream.New(demoupstream.Config{APIKey: anthropicKey}))
	mux.HandleFunc("/fail/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s***%s. Organization %s.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			openaiKey[:8], openaiKey[len(openaiKey)-4:], orgID)
	})
	mux.HandleFunc("/boom/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":"internal: request with key %s for %s failed","type":"server_error"}}`, r.Header.Get("Authorization"), orgID)
	})
	up := httptest.NewServer(mux)
	defer up.Close()

	dir := t.TempDir()
	port, admin := freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	defaultLog, accessLog := filepath.Join(dir, "caddy.log"), filepath.Join(dir, "access.log")
	autosave := filepath.Join(dir, "autosave.json")
	saved := caddy.ConfigAutosavePath
	caddy.ConfigAutosavePath = autosave
	t.Cleanup(func() { caddy.ConfigAutosavePath = saved })

	// The default log is plain JSON at DEBUG, as an operator may leave it:
	// provider credentials never reach it whatever its encoder. The access
	// log, which records request headers, uses llm_redact.
	src := fmt.Sprintf(`{
	admin %s
	log {
		output file %s
		format json
		level DEBUG
	}
	llm {
		store %s
		redact_headers X-Team-Key
		org demo {
			key %s
		}
		provider oa {
			dialect openai
			base_url %s/oa/v1
			api_key {env.GW_IT_OPENAI_KEY}
			header X-Team-Key {env.GW_IT_TEAM_KEY}
		}
		provider an {
			dialect anthropic
			base_url %s/an/v1
			api_key_env GW_IT_ANTHROPIC_KEY
		}
		provider fail {
			dialect openai
			base_url %s/fail/v1
			api_key {env.GW_IT_OPENAI_KEY}
		}
		provider boom {
			dialect openai
			base_url %s/boom/v1
			api_key {env.GW_IT_OPENAI_KEY}
		}
		model oa/demo-chat {
			price 1 1
		}
		model an/demo-chat {
			price 1 1
		}
		model fail/demo-chat {
			price 1 1
		}
		model boom/demo-chat {
			price 1 1
		}
	}
}

http://127.0.0.1:%d {
	log {
		output file %s
		format llm_redact
	}
	route /v1/* {
		llm_gateway
		llm_reliability
	}
}
`, admin, defaultLog, filepath.Join(dir, "gw.db"), clientKey, up.URL, up.URL, up.URL, up.URL, port, accessLog)
	loadCaddyfile(t, src)
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitUp(t, base)

	bearer := http.Header{"Authorization": {"Bearer " + clientKey}}
	xkey := http.Header{"X-Api-Key": {clientKey}, "Anthropic-Version": {"2023-06-01"}}
	c := http.DefaultClient
	var clientBodies []string
	check := func(want int, status int, body []byte) {
		t.Helper()
		clientBodies = append(clientBodies, string(body))
		if status != want {
			t.Fatalf("status %d, want %d: %s", status, want, body)
		}
	}
	status, _, body := send(t, c, base+"/chat/completions", bearer, chatBody("oa/demo-chat", "hello", ""))
	check(200, status, body)
	status, _, body = send(t, c, base+"/messages", xkey, `{"model":"an/demo-chat","max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`)
	check(200, status, body)
	// Cut streams: the reverse proxy warns "aborting with incomplete
	// response" with the upstream request, once per dialect's credential.
	status, _, body = send(t, c, base+"/messages", xkey, `{"model":"an/demo-chat","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[words:30]] [[cut:3]]"}]}`)
	check(200, status, body)
	status, _, body = send(t, c, base+"/chat/completions", bearer, `{"model":"oa/demo-chat","stream":true,"messages":[{"role":"user","content":"[[words:30]] [[cut:3]]"}]}`)
	check(200, status, body)
	// Upstream refusals that quote the provider's key and account.
	status, _, body = send(t, c, base+"/chat/completions", xkey, chatBody("fail/demo-chat", "x", ""))
	check(http.StatusBadGateway, status, body)
	status, _, body = send(t, c, base+"/chat/completions", bearer, chatBody("boom/demo-chat", "x", ""))
	check(http.StatusBadGateway, status, body)
	// A client that sends its Anthropic key to the gateway by mistake.
	status, _, body = send(t, c, base+"/messages", http.Header{"X-Api-Key": {foreignKey}}, `{"model":"an/demo-chat","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`)
	check(http.StatusUnauthorized, status, body)
	// The reliability API, with the key in x-api-key.
	req, _ := http.NewRequest(http.MethodGet, base+"/calls?limit=50", nil)
	req.Header.Set("X-Api-Key", clientKey)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(calls, "data.#").Int() != 6 {
		t.Fatalf("calls: %d %.300s", resp.StatusCode, calls)
	}
	// The operator keeps the upstream's own words on the record, without
	// the credential fragments and the account id.
	if !strings.Contains(string(calls), "Incorrect API key provided") {
		t.Fatalf("the upstream's message is not on the record: %.2000s", calls)
	}
	clientBodies = append(clientBodies, string(calls))

	adminResp, err := http.Get("http://" + admin + "/config/")
	if err != nil {
		t.Fatal(err)
	}
	adminConfig, _ := io.ReadAll(adminResp.Body)
	adminResp.Body.Close()
	if adminResp.StatusCode != 200 || !bytes.Contains(adminConfig, []byte("key_hashes")) {
		t.Fatalf("admin config: %d %.300s", adminResp.StatusCode, adminConfig)
	}
	// Stopping flushes the logs; the autosave was written by the load.
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{"admin GET /config/": adminConfig}
	for name, path := range map[string]string{"default log": defaultLog, "access log": accessLog, "autosave": autosave} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sources[name] = b
	}
	for i, b := range clientBodies {
		sources[fmt.Sprintf("client body %d", i)] = []byte(b)
	}
	// Each path was exercised where it logs.
	for name, want := range map[string]string{
		"default log": "aborting with incomplete response",
		"access log":  `"uri":"/v1/messages"`,
	} {
		if !bytes.Contains(sources[name], []byte(want)) {
			t.Fatalf("%s has no %q:\n%.3000s", name, want, sources[name])
		}
	}
	if n := bytes.Count(sources["access log"], []byte("\n")); n < 8 {
		t.Fatalf("access log has %d lines", n)
	}
	secrets := []string{clientKey, foreignKey, openaiKey, anthropicKey, teamKey, orgID,
		openaiKey[:8] + "***", anthropicKey[len(anthropicKey)-12:]}
	for name, b := range sources {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				i := bytes.Index(b, []byte(s))
				t.Errorf("%s holds %q: ...%s...", name, s, b[max(0, i-200):min(len(b), i+100)])
			}
		}
	}
	for i, b := range clientBodies {
		for _, internal := range []string{"reverseproxy", ".go:", "{id=", "statusError"} {
			if strings.Contains(b, internal) {
				t.Errorf("client body %d holds Go internals (%q): %s", i, internal, b)
			}
		}
	}
}

// hardeningConfig is a gateway with small limits and retention settings on
// the demo upstream at up, plus extra lines for the llm block.
func hardeningConfig(dir string, port int, up, extra string) string {
	return fmt.Sprintf(`{
	admin off
	persist_config off
	log {
		output discard
	}
	llm {
		store %s
		max_body_size 256KiB
		org demo {
			key %s
		}
		org other {
			key %s
		}
		provider demo {
			dialect openai
			base_url %s/v1
		}
		provider demo-anthropic {
			dialect anthropic
			base_url %s/v1
		}
		model demo/demo-chat {
			price 0.5 1.5
		}
		model demo-anthropic/demo-claude {
			price 0.5 1.5
		}
		model demo/demo-embed {
			embedding
			price 0.02 0
		}
		%s
	}
}

http://127.0.0.1:%d {
	route /v1/* {
		llm_gateway
		llm_reliability
	}
}
`, filepath.Join(dir, "gw.db"), demoKey, otherKey, up, up, extra, port)
}

// bodyReader makes up n bytes of a JSON body as they are read, so that a
// test can send bodies far larger than it holds. With a gate, it sends
// only its first held bytes until the gate is closed: a server that
// answers while the rest is held back answered without reading it.
type bodyReader struct {
	head []byte
	left int64
	held int64
	gate chan struct{}
}

func newBodyReader(n int64) *bodyReader {
	return &bodyReader{head: []byte(`{"model":"demo/demo-chat","messages":[{"role":"user","content":"`), left: n}
}

// gated makes r send only its first held bytes until open is called.
func (r *bodyReader) gated(held int64) (*bodyReader, func()) {
	r.held, r.gate = held, make(chan struct{})
	return r, func() { close(r.gate) }
}

var filler = bytes.Repeat([]byte{'x'}, 64<<10)

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if r.gate != nil && r.held <= 0 {
		select {
		case <-r.gate:
			r.gate = nil
		case <-time.After(30 * time.Second):
			return 0, fmt.Errorf("the server never answered while the body was held back")
		}
	}
	if r.gate != nil {
		p = p[:min(int64(len(p)), r.held)]
	}
	n := 0
	if len(r.head) > 0 {
		n = copy(p, r.head)
		r.head = r.head[n:]
	}
	for n < len(p) && int64(n) < r.left {
		n += copy(p[n:min(len(p), n+int(min(r.left-int64(n), int64(len(filler)))))], filler)
	}
	r.left -= int64(n)
	r.held -= int64(n)
	return n, nil
}

// TestRequestLimits: each limit is answered with its status and a SPEC
// error body, a declared oversized body before any of it is read, and 16
// concurrent oversized requests leave the gateway's memory where it was.
func TestRequestLimits(t *testing.T) {
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{}))
	defer up.Close()
	port := freePort(t)
	loadCaddyfile(t, hardeningConfig(t.TempDir(), port, up.URL, `limits {
			embeddings_body_size 16KiB
			api_body_size 32KiB
			max_json_depth 16
			max_json_members 5000
			max_messages 20
			max_tools 4
			max_header_size 8KiB
		}`))
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitUp(t, base)
	auth := http.Header{"Authorization": {"Bearer " + demoKey}}

	post := func(path string, body io.Reader, length int64, h http.Header) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, body)
		req.ContentLength = length
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, out
	}
	expect := func(name string, status int, body []byte, wantStatus int, wantCode string) {
		t.Helper()
		if status != wantStatus || gjson.GetBytes(body, "error.code").String() != wantCode || gjson.GetBytes(body, "error.message").String() == "" {
			t.Fatalf("%s: %d %s, want %d %s", name, status, body, wantStatus, wantCode)
		}
	}

	t.Run("body size per endpoint", func(t *testing.T) {
		// The client holds back all but 64 KiB of a body that declares
		// 64 MiB: the 413 comes before the gateway reads it.
		rd, open := newBodyReader(64 << 20).gated(64 << 10)
		status, _, body := post("/chat/completions", rd, 64<<20, auth)
		open()
		expect("declared chat", status, body, 413, "request_too_large")
		// Without a length, the gateway reads up to the limit, not on.
		rd, open = newBodyReader(64 << 20).gated(1 << 20)
		status, _, body = post("/chat/completions", rd, -1, auth)
		open()
		expect("chunked chat", status, body, 413, "request_too_large")
		status, _, body = post("/messages", newBodyReader(1<<20), 1<<20, http.Header{"X-Api-Key": {demoKey}})
		expect("messages", status, body, 413, "request_too_large")
		if gjson.GetBytes(body, "type").String() != "error" || gjson.GetBytes(body, "error.type").String() != "request_too_large" {
			t.Fatalf("messages 413 is not Anthropic's shape: %s", body)
		}
		emb := `{"model":"demo/demo-embed","input":"` + strings.Repeat("e", 20<<10) + `"}`
		status, _, body = post("/embeddings", strings.NewReader(emb), int64(len(emb)), auth)
		expect("embeddings", status, body, 413, "request_too_large")
		fb := `{"call_id":"x","correction":"` + strings.Repeat("c", 40<<10) + `"}`
		status, _, body = post("/feedback", strings.NewReader(fb), int64(len(fb)), auth)
		expect("feedback", status, body, 413, "request_too_large")
		// Within the limits, the same endpoints serve.
		status, _, body = post("/chat/completions", strings.NewReader(chatBody("demo/demo-chat", strings.Repeat("y", 100<<10), "")), -1, auth)
		if status != 200 {
			t.Fatalf("a body within the limit: %d %.300s", status, body)
		}
	})

	t.Run("json shape, messages and tools", func(t *testing.T) {
		deep := `{"model":"demo/demo-chat","messages":[{"role":"user","content":"x"}],"metadata":` + strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat("}", 20) + `}`
		status, _, body := post("/chat/completions", strings.NewReader(deep), -1, auth)
		expect("deep", status, body, 400, "json_too_deep")
		wide := `{"model":"demo/demo-chat","messages":[{"role":"user","content":"x"}],"stop":[` + strings.TrimSuffix(strings.Repeat(`"s",`, 6000), ",") + `]}`
		status, _, body = post("/chat/completions", strings.NewReader(wide), -1, auth)
		expect("wide", status, body, 400, "json_too_large")
		many := `{"model":"demo/demo-chat","messages":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, 21), ",") + `]}`
		status, _, body = post("/chat/completions", strings.NewReader(many), -1, auth)
		expect("messages", status, body, 400, "too_many_messages")
		if gjson.GetBytes(body, "error.param").String() != "messages" {
			t.Fatalf("param: %s", body)
		}
		tools := `{"model":"demo/demo-chat","messages":[{"role":"user","content":"x"}],"tools":[` +
			strings.TrimSuffix(strings.Repeat(`{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},`, 5), ",") + `]}`
		status, _, body = post("/chat/completions", strings.NewReader(tools), -1, auth)
		expect("tools", status, body, 400, "too_many_tools")
		deepAPI := `{"key":"op_deep","name":"d","description":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`
		status, _, body = post("/operations", strings.NewReader(deepAPI), -1, auth)
		expect("deep API body", status, body, 400, "json_too_deep")
	})

	t.Run("header size", func(t *testing.T) {
		h := http.Header{"Authorization": {"Bearer " + demoKey}, "X-Padding": {strings.Repeat("p", 10<<10)}}
		status, _, body := post("/chat/completions", strings.NewReader(chatBody("demo/demo-chat", "x", "")), -1, h)
		expect("headers", status, body, http.StatusRequestHeaderFieldsTooLarge, "headers_too_large")
	})

	t.Run("memory under 16 concurrent oversized requests", func(t *testing.T) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		errs := make(chan string, 32)
		// The bodies are 16 MiB: 64 times the limit, yet quick to send.
		for i := 0; i < 16; i++ {
			for _, declared := range []bool{true, false} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					length := int64(-1)
					if declared {
						length = 16 << 20
					}
					req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", newBodyReader(16<<20))
					req.ContentLength = length
					req.Header.Set("Authorization", "Bearer "+demoKey)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err.Error()
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 413 {
						errs <- fmt.Sprintf("status %d", resp.StatusCode)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("oversized request: %s", e)
		}
		runtime.ReadMemStats(&after)
		// 32 requests of 16 MiB: had they been read, 512 MiB would have
		// been allocated (twice that as buffers grow). Each chunked one
		// may be read up to the 256 KiB limit.
		allocated := after.TotalAlloc - before.TotalAlloc
		if allocated > 48<<20 {
			t.Fatalf("%d MiB allocated while refusing 32 oversized requests", allocated>>20)
		}
		t.Logf("allocated %d KiB in all while refusing 32 requests of 16 MiB", allocated>>10)
	})
}

// TestConcurrentCallsPerOrg: an org with max_concurrent_calls calls in
// flight is answered 429 with Retry-After for the next one, while another
// org is served.
func TestConcurrentCallsPerOrg(t *testing.T) {
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{}))
	defer up.Close()
	port := freePort(t)
	loadCaddyfile(t, hardeningConfig(t.TempDir(), port, up.URL, `limits {
			max_concurrent_calls 2
		}`))
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitUp(t, base)
	auth := http.Header{"Authorization": {"Bearer " + demoKey}}
	post := func(path string, body io.Reader, length int64, h http.Header) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, body)
		req.ContentLength = length
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST %s: %v", path, err)
			return 0, nil, nil
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, out
	}
	expect := func(name string, status int, body []byte, wantStatus int, wantCode string) {
		t.Helper()
		if status != wantStatus || gjson.GetBytes(body, "error.code").String() != wantCode || gjson.GetBytes(body, "error.message").String() == "" {
			t.Fatalf("%s: %d %s, want %d %s", name, status, body, wantStatus, wantCode)
		}
	}
	slow := chatBody("demo/demo-chat", "wait [[sleep:1500]]", "")
	other := http.Header{"Authorization": {"Bearer " + otherKey}}
	type answer struct {
		status int
		h      http.Header
		body   []byte
	}
	// Three slow calls for two slots: one is refused when they overlap,
	// and a call of another org made as soon as the refusal arrives (the
	// other two still hold the slots) is served. Rounds repeat until they
	// overlap, so that no timing is assumed.
	deadline := time.Now().Add(60 * time.Second)
	var refused []byte
	var refusedHeader http.Header
	otherStatus := 0
	for refused == nil && time.Now().Before(deadline) {
		answers := make(chan answer, 3)
		for i := 0; i < 3; i++ {
			go func() {
				status, h, body := post("/chat/completions", strings.NewReader(slow), -1, auth)
				answers <- answer{status, h, body}
			}()
		}
		for i := 0; i < 3; i++ {
			a := <-answers
			switch a.status {
			case http.StatusTooManyRequests:
				if refused == nil {
					refused, refusedHeader = a.body, a.h
					otherStatus, _, _ = post("/chat/completions", strings.NewReader(chatBody("demo/demo-chat", "other org", "")), -1, other)
				}
			case http.StatusOK:
			default:
				t.Fatalf("slow call: %d %s", a.status, a.body)
			}
		}
	}
	expect("concurrency", http.StatusTooManyRequests, refused, http.StatusTooManyRequests, "too_many_concurrent_calls")
	if refusedHeader.Get("Retry-After") == "" || gjson.GetBytes(refused, "error.type").String() != "rate_limit_error" {
		t.Fatalf("429 without Retry-After or type: %v %s", refusedHeader, refused)
	}
	// Another org is not held back by this one's calls.
	if otherStatus != 200 {
		t.Fatalf("other org while demo's slots were full: %d", otherStatus)
	}
}

// TestSlowClientsAreCut: a client that sends its body too slowly, stalling
// or trickling a byte at a time, is answered 408 with a SPEC body and its
// connection closed, on the model calls and the reliability API.
func TestSlowClientsAreCut(t *testing.T) {
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{}))
	defer up.Close()
	port := freePort(t)
	loadCaddyfile(t, hardeningConfig(t.TempDir(), port, up.URL, `limits {
			body_read_timeout 1s
		}`))
	waitUp(t, fmt.Sprintf("http://127.0.0.1:%d/v1", port))

	for _, tc := range []struct {
		name, path string
		trickle    bool
	}{
		{"stalled chat", "/v1/chat/completions", false},
		{"trickling chat", "/v1/chat/completions", true},
		{"stalled reliability API", "/v1/operations", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"model\":", tc.path, demoKey)
			answered := make(chan struct{})
			if tc.trickle {
				// One byte every 100 ms keeps every idle timeout happy;
				// the body's own time limit must still end it.
				go func() {
					for i := 0; i < 100000; i++ {
						select {
						case <-answered:
							return
						case <-time.After(100 * time.Millisecond):
						}
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}()
			}
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			close(answered)
			if err != nil {
				t.Fatalf("no answer to a slow body: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || gjson.GetBytes(body, "error.code").String() != "request_timeout" {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if !resp.Close {
				t.Fatal("the connection of a timed-out body is kept open")
			}
		})
	}
}

// TestUpstreamErrorsAreClean: every kind of upstream failure reaches the
// client as its dialect's error with a message of the gateway's own, the
// upstream's Retry-After on 429 and 503 (and Anthropic's 529 passed on as
// such to Anthropic clients), while the call record keeps the upstream's
// words without credentials; and an answer in a content coding the gateway
// never asked for is decoded.
func TestUpstreamErrorsAreClean(t *testing.T) {
	demo := demoupstream.New(demoupstream.Config{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/rate/"):
			w.Header().Set("Retry-After", "17")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for demo-chat in organization org-ABCdef123456 on requests per min.","type":"requests","code":"rate_limit_exceeded"}}`)
		case strings.HasPrefix(r.URL.Path, "/unavail/"):
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"The server is overloaded (node gpu-17.internal)","type":"server_error"}}`)
		case strings.HasPrefix(r.URL.Path, "/overloaded/"):
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		case strings.HasPrefix(r.URL.Path, "/auth/"):
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-abc12***********wxyz.","type":"invalid_request_error","code":"invalid_api_key"}}`)
		case strings.HasPrefix(r.URL.Path, "/toolong/"):
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"This model's maximum context length is 8192 tokens; org-ABCdef123456 asked for 9000.","type":"invalid_request_error","code":"context_length_exceeded","param":"messages"}}`)
		case strings.HasPrefix(r.URL.Path, "/gzip/"):
			// Compressed although the gateway did not ask (a loopback
			// provider is not asked to compress).
			if r.Header.Get("Accept-Encoding") != "" {
				w.WriteHeader(500)
				return
			}
			rec := httptest.NewRecorder()
			demo.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			zw := gzip.NewWriter(w)
			_, _ = zw.Write(rec.Body.Bytes())
			_ = zw.Close()
		default:
			w.WriteHeader(404)
		}
	}))
	defer up.Close()
	downPort := freePort(t)
	var extra strings.Builder
	for _, p := range []struct{ name, dialect string }{
		{"rate", "openai"}, {"unavail", "openai"}, {"overloaded", "anthropic"}, {"auth", "openai"}, {"toolong", "openai"}, {"gzip", "openai"}, {"gzipa", "anthropic"},
	} {
		path := p.name
		if p.name == "gzipa" {
			path = "gzip"
		}
		fmt.Fprintf(&extra, "provider %s {\n\tdialect %s\n\tbase_url %s/%s/v1\n}\nmodel %s/demo-chat {\n\tprice 1 1\n}\n", p.name, p.dialect, up.URL, path, p.name)
	}
	fmt.Fprintf(&extra, "provider down {\n\tdialect openai\n\tbase_url http://127.0.0.1:%d/v1\n\tdial_timeout 1s\n}\nmodel down/demo-chat {\n\tprice 1 1\n}\n", downPort)
	port := freePort(t)
	loadCaddyfile(t, hardeningConfig(t.TempDir(), port, up.URL, extra.String()))
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitUp(t, base)
	c := http.DefaultClient
	chat := func(model, text string) (int, http.Header, []byte) {
		return send(t, c, base+"/chat/completions", http.Header{"Authorization": {"Bearer " + demoKey}}, chatBody(model, text, ""))
	}
	messages := func(model, text string, stream bool) (int, http.Header, []byte) {
		return send(t, c, base+"/messages", http.Header{"X-Api-Key": {demoKey}},
			fmt.Sprintf(`{"model":%q,"max_tokens":50,"stream":%v,"messages":[{"role":"user","content":%q}]}`, model, stream, text))
	}
	clean := func(name string, body []byte) {
		t.Helper()
		for _, bad := range []string{"org-ABCdef123456", "sk-abc12", "gpu-17", "reverseproxy", ".go:", "{id=", "127.0.0.1", "dial tcp"} {
			if bytes.Contains(body, []byte(bad)) {
				t.Errorf("%s: the client's error holds %q: %s", name, bad, body)
			}
		}
	}
	for _, tc := range []struct {
		name       string
		do         func() (int, http.Header, []byte)
		status     int
		typ, code  string
		retryAfter string
	}{
		{"429 chat", func() (int, http.Header, []byte) { return chat("rate/demo-chat", "x") }, 429, "rate_limit_error", "upstream_rate_limited", "17"},
		{"429 messages", func() (int, http.Header, []byte) { return messages("rate/demo-chat", "x", false) }, 429, "rate_limit_error", "upstream_rate_limited", "17"},
		{"503 chat", func() (int, http.Header, []byte) { return chat("unavail/demo-chat", "x") }, 503, "api_error", "upstream_unavailable", "5"},
		{"529 messages", func() (int, http.Header, []byte) { return messages("overloaded/demo-chat", "x", false) }, 529, "overloaded_error", "overloaded", "3"},
		{"529 messages stream", func() (int, http.Header, []byte) { return messages("overloaded/demo-chat", "x", true) }, 529, "overloaded_error", "overloaded", "3"},
		{"529 chat", func() (int, http.Header, []byte) { return chat("overloaded/demo-chat", "x") }, 503, "api_error", "upstream_overloaded", "3"},
		{"401 chat", func() (int, http.Header, []byte) { return chat("auth/demo-chat", "x") }, 502, "api_error", "upstream_auth_failed", ""},
		{"400 chat", func() (int, http.Header, []byte) { return chat("toolong/demo-chat", "x") }, 400, "invalid_request_error", "context_length_exceeded", ""},
		{"unreachable", func() (int, http.Header, []byte) { return chat("down/demo-chat", "x") }, 502, "api_error", "upstream_unavailable", ""},
	} {
		status, h, body := tc.do()
		if status != tc.status || gjson.GetBytes(body, "error.type").String() != tc.typ || gjson.GetBytes(body, "error.code").String() != tc.code ||
			h.Get("Retry-After") != tc.retryAfter {
			t.Errorf("%s: %d Retry-After %q %s; want %d %s %s %q", tc.name, status, h.Get("Retry-After"), body, tc.status, tc.typ, tc.code, tc.retryAfter)
		}
		clean(tc.name, body)
	}
	// The record keeps the upstream's words for the operator, scrubbed.
	page := getJSON(t, base+"/calls?limit=20")
	var sawAuth, sawRate bool
	for _, call := range page.Get("data").Array() {
		for _, a := range call.Get("attempts").Array() {
			e := a.Get("error").String()
			sawAuth = sawAuth || strings.Contains(e, "Incorrect API key provided")
			sawRate = sawRate || strings.Contains(e, "Rate limit reached")
			if strings.Contains(e, "sk-abc12") || strings.Contains(e, "org-ABCdef123456") || strings.Contains(e, "{id=") {
				t.Errorf("record keeps a secret or internals: %s", e)
			}
		}
	}
	if !sawAuth || !sawRate {
		t.Errorf("the upstream's messages are not on the records: %.3000s", page.Raw)
	}
	// Content codings the gateway never asked for are decoded.
	status, _, body := chat("gzip/demo-chat", "zipped anyway")
	if status != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != "Echo: zipped anyway" {
		t.Fatalf("gzip chat: %d %s", status, body)
	}
	status, _, body = messages("gzipa/demo-chat", "zipped stream", true)
	if status != 200 || !bytes.Contains(body, []byte("message_stop")) || !bytes.Contains(body, []byte("zipped")) {
		t.Fatalf("gzip stream: %d %s", status, body)
	}
}

// getJSON GETs url with the demo key and parses the 200 answer.
func getJSON(t *testing.T, url string) gjson.Result {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+demoKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return gjson.ParseBytes(b)
}

// TestRetention: a large payload is kept truncated with its original size,
// list pages stop at the byte bound and page through everything, and
// payloads past their time are pruned by the running gateway.
func TestRetention(t *testing.T) {
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{}))
	defer up.Close()
	port := freePort(t)
	loadCaddyfile(t, hardeningConfig(t.TempDir(), port, up.URL, `retention {
			max_payload_size 16KiB
			max_page_size 64KiB
			payload_ttl 2s
			prune_interval 200ms
		}`))
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitUp(t, base)
	auth := http.Header{"Authorization": {"Bearer " + demoKey}}
	big := chatBody("demo/demo-chat", strings.Repeat("b", 200<<10), "")
	status, _, body := send(t, http.DefaultClient, base+"/chat/completions", auth, big)
	if status != 200 {
		t.Fatalf("%d %.300s", status, body)
	}
	id := gjson.GetBytes(body, "id").String()
	rec := getJSON(t, base+"/calls/"+id)
	if !rec.Get("request_payload.truncated").Bool() || rec.Get("request_payload.original_bytes").Int() != int64(len(big)) ||
		len(rec.Get("request_payload").Raw) > 16<<10 {
		t.Fatalf("large payload kept as %.300s (%d bytes)", rec.Get("request_payload").Raw, len(rec.Get("request_payload").Raw))
	}
	var ids []string
	for i := 0; i < 20; i++ {
		status, _, body := send(t, http.DefaultClient, base+"/chat/completions", auth, chatBody("demo/demo-chat", fmt.Sprintf("%d %s", i, strings.Repeat("m", 12<<10)), ""))
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		ids = append(ids, gjson.GetBytes(body, "id").String())
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		url := base + "/calls?limit=200"
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		page := getJSON(t, url)
		if n := len(page.Raw); n > 64<<10+32<<10 {
			t.Fatalf("page of %d bytes", n)
		}
		for _, c := range page.Get("data").Array() {
			seen[c.Get("id").String()] = true
		}
		if !page.Get("has_more").Bool() {
			if pages < 2 {
				t.Fatalf("21 calls of about 24 KiB fit %d pages of 64 KiB", pages+1)
			}
			break
		}
		cursor = page.Get("next_cursor").String()
	}
	for _, id := range append(ids, id) {
		if !seen[id] {
			t.Fatalf("call %s missing from the pages", id)
		}
	}
	// The pruner runs every 200ms and prunes payloads older than 2s.
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec := getJSON(t, base+"/calls/"+ids[0])
		if rec.Get("request_payload.pruned").Bool() && rec.Get("response_payload.pruned").Bool() {
			if rec.Get("prompt_tokens").Int() == 0 || rec.Get("status").String() != "succeeded" {
				t.Fatalf("pruning lost the record: %s", rec.Raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("payload not pruned: %.300s", rec.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
