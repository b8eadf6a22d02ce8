package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tidwall/gjson"
)

const obsLimitedKey = "mg_live_obslimited0000000000000000"

// obsConfig is the Caddyfile of the observability tests: the demo upstream
// (healthy, and failing with 503), a provider on a closed port, a model
// whose paths fall back across them, a model no org has the credit for,
// an org with a rate limit of one call a minute, the `metrics` handler on a site of its own, and the access log
// fields of Caddyfile.example. {{TRACING}} and {{UPSTREAM_TRACING}} are
// the tracing directives of the site and of the demo upstream's, when a
// test wants traces.
const obsConfig = `{
	admin {{ADMIN}}
	persist_config off
	log {
		output discard
	}
	llm {
		store {{STORE}}
		org demo {
			key ` + demoKey + `
			cache
		}
		org limited {
			key ` + obsLimitedKey + `
			rate_limit {
				requests_per_minute 1
			}
		}
		provider demo {
			dialect openai
			base_url {{UPSTREAM}}/v1
		}
		provider broken {
			dialect openai
			base_url {{BROKEN}}/v1
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
		model demo/pricey {
			price 1000000 1000000
			path demo demo-chat
		}
		model demo/fallback-chat {
			price 1 2
			path down demo-chat
			path broken demo-chat
			path demo demo-chat
		}
	}
}

http://127.0.0.1:{{PORT}} {
	log {
		output file {{ACCESSLOG}}
		format llm_redact
	}
{{LOG_FIELDS}}
	{{TRACING}}
	route {
		llm_health
		llm_gateway
		llm_reliability
	}
}

http://127.0.0.1:{{METRICSPORT}} {
	metrics
}

{{UPSTREAM}} {
	{{UPSTREAM_TRACING}}
	llm_demo_upstream {
		strict
	}
}

{{BROKEN}} {
	llm_demo_upstream {
		fail_status 503
	}
}
`

// obsGateway is a running Caddy with obsConfig.
type obsGateway struct {
	*gateway
	origin    string // http://127.0.0.1:<port>
	metrics   string // the metrics handler's URL
	accessLog string
}

// startObs loads obsConfig; with tracing, the site's spans are named
// "gateway" and the demo upstream's "upstream".
func startObs(t *testing.T, tracing bool) *obsGateway {
	t.Helper()
	dir := t.TempDir()
	port, metricsPort := freePort(t), freePort(t)
	g := &obsGateway{
		gateway: &gateway{t: t, dir: dir, store: filepath.Join(dir, "gateway.db"),
			admin: fmt.Sprintf("127.0.0.1:%d", freePort(t)), upstream: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))},
		origin:    fmt.Sprintf("http://127.0.0.1:%d", port),
		metrics:   fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		accessLog: filepath.Join(dir, "access.log"),
	}
	g.base = g.origin + "/v1"
	siteTracing, upstreamTracing := "", ""
	if tracing {
		siteTracing, upstreamTracing = "tracing {\n\t\tspan gateway\n\t}", "tracing {\n\t\tspan upstream\n\t}"
	}
	src := strings.NewReplacer(
		"{{LOG_FIELDS}}", exampleLogFields(t),
		"{{TRACING}}", siteTracing,
		"{{UPSTREAM_TRACING}}", upstreamTracing,
		"{{ADMIN}}", g.admin,
		"{{STORE}}", g.store,
		"{{UPSTREAM}}", g.upstream,
		"{{BROKEN}}", fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
		"{{DOWNPORT}}", fmt.Sprint(freePort(t)),
		"{{PORT}}", fmt.Sprint(port),
		"{{METRICSPORT}}", fmt.Sprint(metricsPort),
		"{{ACCESSLOG}}", g.accessLog,
	).Replace(obsConfig)
	cfg, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(src), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v", err)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("loading config: %v", err)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
	g.waitReady()
	return g
}

// exampleLogFields are the log_append lines of Caddyfile.example's site.
func exampleLogFields(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^\s*log_append .*$`).FindAllString(string(src), -1)
	if len(lines) == 0 {
		t.Fatal("Caddyfile.example has no log_append line")
	}
	return strings.Join(lines, "\n")
}

// scrape reads a Prometheus endpoint.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return fams
}

// value sums the samples of name whose labels include want: a counter's
// or gauge's value, or, for name_sum and name_count of a histogram, its
// sum and count. A series that does not exist counts 0.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	part := ""
	fam := fams[name]
	if fam == nil {
		for _, suffix := range []string{"_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && fams[base] != nil {
				fam, part = fams[base], suffix
			}
		}
	}
	if fam == nil {
		return 0
	}
	total := 0.0
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		switch {
		case part == "_sum":
			total += m.GetHistogram().GetSampleSum()
		case part == "_count":
			total += float64(m.GetHistogram().GetSampleCount())
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// delta is what a metric gained between two scrapes.
func delta(before, after map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	return value(after, name, labels) - value(before, name, labels)
}

// chatCall sends a chat call with key and extra headers, and returns the
// status, the answer and its headers.
func (g *obsGateway) chatCall(key, body string, header map[string]string) (int, gjson.Result, http.Header) {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.StatusCode, gjson.ParseBytes(out), resp.Header
}

// tally adds up what answers report.
type tally struct {
	calls         int
	input, output float64
	cost          float64
}

func (ta *tally) add(ans gjson.Result) {
	ta.calls++
	ta.input += ans.Get("usage.prompt_tokens").Float()
	ta.output += ans.Get("usage.completion_tokens").Float()
	ta.cost += ans.Get("delivery.cost_usd").Float()
}

// TestMetricsAfterCalls: after calls through a real Caddy, its admin
// /metrics (and the `metrics` handler) show the calls, their tokens and
// cost by model and provider, equal to what the answers said; a fallback
// with its causes and the upstream errors by status; a streamed call's
// time to first token and inter-token time; cache hits; a rate-limit and
// a credit rejection; and the store's commits and queues.
func TestMetricsAfterCalls(t *testing.T) {
	g := startObs(t, false)
	admin := "http://" + g.admin + "/metrics"
	before := scrape(t, admin)

	var chat tally
	for i := range 3 {
		status, ans, _ := g.chatCall(demoKey, chatBody("demo/demo-chat", fmt.Sprintf("count the words of call %d", i), `"max_tokens":50`), nil)
		if status != http.StatusOK {
			t.Fatalf("chat call %d: %d %s", i, status, ans.Raw)
		}
		chat.add(ans)
	}
	// A call the cache answers the second time.
	cacheBody := chatBody("demo/demo-chat", "remember this answer", "")
	use := map[string]string{"X-Gateway-Cache": "use"}
	for i, want := range []string{"miss", "hit"} {
		status, ans, h := g.chatCall(demoKey, cacheBody, use)
		if status != http.StatusOK || h.Get("X-Gateway-Cache") != want {
			t.Fatalf("cached call %d: %d, X-Gateway-Cache %q, want %q: %s", i, status, h.Get("X-Gateway-Cache"), want, ans.Raw)
		}
		if want == "miss" {
			chat.add(ans)
		}
	}
	// A stream of 20 words.
	status, _, _ := g.chatCall(demoKey, `{"model":"demo/demo-mini","stream":true,"messages":[{"role":"user","content":"stream [[words:20]]"}]}`, nil)
	if status != http.StatusOK {
		t.Fatalf("stream: %d", status)
	}
	// A call that falls back past a closed port and a 503 to the demo.
	status, fb, _ := g.chatCall(demoKey, chatBody("demo/fallback-chat", "fall back please", ""), nil)
	if status != http.StatusOK || fb.Get("delivery.provider").String() != "demo" {
		t.Fatalf("fallback call: %d %s", status, fb.Raw)
	}
	// A call the org has not the credit for.
	if status, ans, _ := g.chatCall(demoKey, chatBody("demo/pricey", "too dear", ""), nil); status != http.StatusTooManyRequests {
		t.Fatalf("call beyond the credit: %d %s, want 429", status, ans.Raw)
	}
	// The second call of a minute on a key limited to one.
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if status, ans, _ := g.chatCall(obsLimitedKey, chatBody("demo/demo-mini", "limited", ""), nil); status != want {
			t.Fatalf("limited call %d: %d, want %d: %s", i, status, want, ans.Raw)
		}
	}

	after := scrape(t, admin)
	chatLabels := map[string]string{"endpoint": "chat.completions", "dialect": "openai", "gen_ai_operation_name": "chat",
		"gen_ai_request_model": "demo/demo-chat", "gen_ai_response_model": "demo/demo-chat", "gen_ai_provider_name": "demo", "tier": "standard"}
	with := func(base map[string]string, k, v string) map[string]string {
		m := map[string]string{k: v}
		for bk, bv := range base {
			m[bk] = bv
		}
		return m
	}
	if got := delta(before, after, "llm_gateway_requests_total", with(chatLabels, "outcome", "success")); got != float64(chat.calls) {
		t.Errorf("requests_total{demo/demo-chat, success} gained %v, want %d", got, chat.calls)
	}
	if got := delta(before, after, "llm_gateway_requests_total", with(chatLabels, "outcome", "cache_hit")); got != 1 {
		t.Errorf("requests_total{demo/demo-chat, cache_hit} gained %v, want 1", got)
	}
	if got := delta(before, after, "gen_ai_server_request_duration_seconds_count", chatLabels); got != float64(chat.calls+1) {
		t.Errorf("request duration count of demo/demo-chat gained %v, want %d", got, chat.calls+1)
	}
	if got := delta(before, after, "gen_ai_client_token_usage_sum", with(chatLabels, "gen_ai_token_type", "input")); got != chat.input {
		t.Errorf("input tokens of demo/demo-chat gained %v, want %v (the answers' prompt_tokens)", got, chat.input)
	}
	if got := delta(before, after, "gen_ai_client_token_usage_sum", with(chatLabels, "gen_ai_token_type", "output")); got != chat.output {
		t.Errorf("output tokens of demo/demo-chat gained %v, want %v (the answers' completion_tokens)", got, chat.output)
	}
	if got := delta(before, after, "llm_gateway_billed_usd_total", chatLabels); math.Abs(got-chat.cost) > 1e-12 || got <= 0 {
		t.Errorf("billed USD of demo/demo-chat gained %v, want %v (the answers' delivery.cost_usd)", got, chat.cost)
	}
	if got := delta(before, after, "llm_gateway_upstream_cost_usd_total", chatLabels); got <= 0 {
		t.Errorf("upstream cost of demo/demo-chat gained %v, want more than 0", got)
	}
	if got := delta(before, after, "llm_gateway_response_cache_lookups_total", map[string]string{"gen_ai_request_model": "demo/demo-chat", "result": "hit"}); got != 1 {
		t.Errorf("cache hits gained %v, want 1", got)
	}

	mini := map[string]string{"gen_ai_request_model": "demo/demo-mini", "gen_ai_provider_name": "demo"}
	if got := delta(before, after, "gen_ai_server_time_to_first_token_seconds_count", mini); got != 1 {
		t.Errorf("time to first token of demo/demo-mini observed %v times, want 1 (the stream)", got)
	}
	if got := delta(before, after, "gen_ai_server_time_per_output_token_seconds_count", mini); got != 1 {
		t.Errorf("time per output token of demo/demo-mini observed %v times, want 1 (the stream)", got)
	}

	fbLabels := map[string]string{"gen_ai_request_model": "demo/fallback-chat"}
	if got := delta(before, after, "llm_gateway_requests_total", with(with(fbLabels, "gen_ai_provider_name", "demo"), "outcome", "success")); got != 1 {
		t.Errorf("requests_total{demo/fallback-chat, demo, success} gained %v, want 1", got)
	}
	for _, c := range []struct{ provider, cause string }{{"down", "connect_error"}, {"broken", "server_error"}} {
		l := with(with(fbLabels, "gen_ai_provider_name", c.provider), "cause", c.cause)
		if got := delta(before, after, "llm_gateway_fallbacks_total", l); got != 1 {
			t.Errorf("fallbacks_total%v gained %v, want 1", l, got)
		}
	}
	for _, c := range []struct{ provider, status string }{{"down", "connect_error"}, {"broken", "503"}} {
		l := map[string]string{"gen_ai_provider_name": c.provider, "status": c.status}
		if got := delta(before, after, "llm_gateway_upstream_errors_total", l); got != 1 {
			t.Errorf("upstream_errors_total%v gained %v, want 1", l, got)
		}
	}
	if got := delta(before, after, "gen_ai_client_operation_duration_seconds_count",
		map[string]string{"gen_ai_provider_name": "demo", "gen_ai_request_model": "demo-chat", "error_type": ""}); got < float64(chat.calls+1) {
		t.Errorf("successful upstream attempts on demo gained %v, want at least %d", got, chat.calls+1)
	}
	if got := delta(before, after, "llm_gateway_rejections_total", map[string]string{"reason": "rate_limit_exceeded"}); got != 1 {
		t.Errorf("rate-limit rejections gained %v, want 1", got)
	}
	if got := delta(before, after, "llm_gateway_rejections_total", map[string]string{"reason": "insufficient_quota"}); got != 1 {
		t.Errorf("credit rejections gained %v, want 1", got)
	}

	// The records reach the disk in group commits.
	eventually(t, "the commits of the records", func() error {
		now := scrape(t, admin)
		if got := delta(before, now, "llm_gateway_store_commit_calls_sum", nil); got < float64(chat.calls+4) {
			return fmt.Errorf("commits hold %v records, want at least %d", got, chat.calls+4)
		}
		if got := value(now, "llm_gateway_store_commit_queue_depth", nil); got != 0 {
			return fmt.Errorf("%v records wait for their commit", got)
		}
		return nil
	})
	if got := value(after, "llm_gateway_store_up", nil); got != 1 {
		t.Errorf("store_up = %v, want 1", got)
	}
	if got := value(after, "llm_gateway_store_commit_queue_capacity", nil); got <= 0 {
		t.Errorf("commit queue capacity = %v, want more than 0", got)
	}
	if _, ok := after["llm_gateway_batch_queue_depth"]; !ok {
		t.Error("no llm_gateway_batch_queue_depth")
	}

	// The metrics handler serves the same registry.
	viaHandler := scrape(t, g.metrics)
	if got, want := value(viaHandler, "llm_gateway_requests_total", with(chatLabels, "outcome", "success")),
		value(after, "llm_gateway_requests_total", with(chatLabels, "outcome", "success")); got != want {
		t.Errorf("the metrics handler shows %v demo/demo-chat calls, the admin API %v", got, want)
	}
}

// TestMetricLabelsAreBounded: no label value of the gateway's metrics is
// an id, a key or a prompt.
func TestMetricLabelsAreBounded(t *testing.T) {
	g := startObs(t, false)
	if status, ans, _ := g.chatCall(demoKey, chatBody("demo/demo-chat", "a secret prompt text", ""), nil); status != http.StatusOK {
		t.Fatalf("call: %d %s", status, ans.Raw)
	}
	resp, err := http.Get("http://" + g.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "llm_gateway_") && !strings.HasPrefix(line, "gen_ai_") {
			continue
		}
		for _, bad := range []string{"chatcmpl-", "org_", "key_", "_live_", "secret prompt"} {
			if strings.Contains(line, bad) {
				t.Errorf("metric line carries %q: %s", bad, line)
			}
		}
	}
}

// TestHealthEndpoints: /healthz and /readyz answer on the site; readiness
// reports the store, the commit queue, the workers and each provider, and
// a provider whose only path keeps failing shows as down (in the metrics
// too) without making the gateway unready.
func TestHealthEndpoints(t *testing.T) {
	g := startObs(t, false)
	get := func(path string) (int, gjson.Result) {
		t.Helper()
		resp, err := http.Get(g.origin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		return resp.StatusCode, gjson.ParseBytes(out)
	}
	if status, body := get("/healthz"); status != http.StatusOK || body.Get("status").String() != "ok" {
		t.Fatalf("GET /healthz: %d %s", status, body.Raw)
	}
	status, ready := get("/readyz")
	if status != http.StatusOK || ready.Get("status").String() != "ready" {
		t.Fatalf("GET /readyz: %d %s", status, ready.Raw)
	}
	for _, check := range []string{"store", "commit_queue", "workers"} {
		if !ready.Get(check + ".ok").Bool() {
			t.Errorf("readiness check %s is not ok: %s", check, ready.Raw)
		}
	}
	if !ready.Get("workers.evaluations").Bool() || !ready.Get("workers.batch").Bool() {
		t.Errorf("workers not running: %s", ready.Get("workers").Raw)
	}
	for _, p := range []string{"demo", "broken", "down"} {
		if s := ready.Get("providers." + p + ".state").String(); s != "healthy" {
			t.Errorf("provider %s is %q before any call, want healthy", p, s)
		}
	}

	// Three failures in a row cool a path down (three prompts: the org
	// has the response cache on).
	for i := range 3 {
		if status, ans, _ := g.chatCall(demoKey, chatBody("demo/fallback-chat", fmt.Sprintf("fall back %d", i), ""), nil); status != http.StatusOK {
			t.Fatalf("fallback call %d: %d %s", i, status, ans.Raw)
		}
	}
	status, ready = get("/readyz")
	if status != http.StatusOK {
		t.Errorf("GET /readyz with two providers down: %d, want 200: %s", status, ready.Raw)
	}
	for p, want := range map[string]string{"demo": "healthy", "broken": "down", "down": "down"} {
		if s := ready.Get("providers." + p + ".state").String(); s != want {
			t.Errorf("provider %s is %q, want %q: %s", p, s, want, ready.Get("providers").Raw)
		}
	}
	if n := ready.Get("providers.down.cooling_down").Int(); n != 1 {
		t.Errorf("provider down has %d paths cooling down, want 1", n)
	}
	fams := scrape(t, "http://"+g.admin+"/metrics")
	for p, want := range map[string]float64{"down": 1, "broken": 1, "demo": 0} {
		if got := value(fams, "llm_gateway_upstream_paths_cooling_down", map[string]string{"gen_ai_provider_name": p}); got != want {
			t.Errorf("metrics: %v paths of %s cooling down, want %v", got, p, want)
		}
	}

	req, _ := http.NewRequest(http.MethodPost, g.origin+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /readyz: %s, want 405", resp.Status)
	}
	// Other paths still reach the gateway.
	if status, _, _ := g.do(http.MethodGet, "/models", demoKey, nil); status != http.StatusOK {
		t.Errorf("GET /v1/models behind llm_health: %d", status)
	}
}

// TestAccessLogFields: with Caddyfile.example's log_append lines, each
// access log entry of a call carries the org, the key's hint, the call id,
// the provider, model and tier, the tokens, the cost and the fallbacks,
// for whole and streamed answers alike; no entry carries the key, sent as
// a bearer token or in x-api-key.
func TestAccessLogFields(t *testing.T) {
	g := startObs(t, false)
	status, ans, _ := g.chatCall(demoKey, chatBody("demo/fallback-chat", "log this call", ""), nil)
	if status != http.StatusOK {
		t.Fatalf("call: %d %s", status, ans.Raw)
	}
	if status, _, _ := g.chatCall(demoKey, `{"model":"demo/demo-mini","stream":true,"messages":[{"role":"user","content":"stream [[words:5]]"}]}`, nil); status != http.StatusOK {
		t.Fatalf("stream: %d", status)
	}
	// The key in the header Anthropic clients send it in.
	req, _ := http.NewRequest(http.MethodPost, g.base+"/messages",
		strings.NewReader(`{"model":"demo/demo-chat","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", demoKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/messages with x-api-key: %s", resp.Status)
	}
	id := ans.Get("id").String()
	var entry, streamEntry, messagesEntry gjson.Result
	eventually(t, "the access log entries of the calls", func() error {
		raw, err := os.ReadFile(g.accessLog)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			e := gjson.Parse(line)
			switch {
			case e.Get("llm_call_id").String() == id:
				entry = e
			case e.Get("llm_model").String() == "demo/demo-mini":
				streamEntry = e
			case e.Get("request.uri").String() == "/v1/messages":
				messagesEntry = e
			}
		}
		if !entry.Exists() || !streamEntry.Exists() || !messagesEntry.Exists() {
			return fmt.Errorf("no entries with llm_call_id %s, llm_model demo/demo-mini and uri /v1/messages in:\n%s", id, raw)
		}
		return nil
	})
	want := map[string]any{
		"llm_org":           "demo",
		"llm_key":           "mg_live_…0000",
		"llm_provider":      "demo",
		"llm_model":         "demo/fallback-chat",
		"llm_tier":          "standard",
		"llm_input_tokens":  ans.Get("usage.prompt_tokens").Int(),
		"llm_output_tokens": ans.Get("usage.completion_tokens").Int(),
		"llm_fallbacks":     int64(2),
		"llm_outcome":       "success",
	}
	for field, v := range want {
		got := entry.Get(field)
		switch v := v.(type) {
		case string:
			if got.String() != v {
				t.Errorf("access log %s = %s, want %q", field, got.Raw, v)
			}
		case int64:
			if got.Type != gjson.Number || got.Int() != v {
				t.Errorf("access log %s = %s, want %d", field, got.Raw, v)
			}
		}
	}
	if got, want := entry.Get("llm_cost_usd").Float(), ans.Get("delivery.cost_usd").Float(); math.Abs(got-want) > 1e-15 || got <= 0 {
		t.Errorf("access log llm_cost_usd = %v, want %v", got, want)
	}
	if streamEntry.Get("llm_provider").String() != "demo" || streamEntry.Get("llm_output_tokens").Int() <= 0 {
		t.Errorf("the stream's entry lacks its provider or tokens: %s", streamEntry.Raw)
	}
	if got := messagesEntry.Get("llm_key").String(); got != "mg_live_…0000" {
		t.Errorf("the x-api-key call's llm_key = %q, want the hint", got)
	}
	raw, _ := os.ReadFile(g.accessLog)
	if secret := demoKey[len("mg_live_"):]; bytes.Contains(raw, []byte(secret)) {
		t.Errorf("the access log carries the API key:\n%s", raw)
	}
}

// TestMetricsOfRefundsAndEvalPass: the eval pass's gate verdicts and
// scores show by operation key, and a thumbs_down refund by kind, with
// the USD it gave back.
func TestMetricsOfRefundsAndEvalPass(t *testing.T) {
	g := startObs(t, false)
	admin := "http://" + g.admin + "/metrics"
	before := scrape(t, admin)
	ev := g.post("/evaluators", `{"name":"echoes","kind":"regex","config":{"pattern":"^Echo: "}}`, http.StatusCreated)
	g.post("/operations", fmt.Sprintf(`{"key":"obs_summaries","name":"Summaries","ship_gates":[{"evaluator_id":%q,"min_score":0.5}]}`,
		ev.Get("id").String()), http.StatusCreated)
	call := g.post("/chat/completions", chatBody("demo/demo-chat", "score me", `"metadata":{"operation_id":"obs_summaries"}`), http.StatusOK)
	if !call.Get("delivery.evals.scheduled").Bool() {
		t.Fatalf("the call's eval pass is not scheduled: %s", call.Get("delivery").Raw)
	}
	op := map[string]string{"operation": "obs_summaries"}
	eventually(t, "the eval pass's verdict in the metrics", func() error {
		now := scrape(t, admin)
		if got := delta(before, now, "llm_gateway_eval_pass_gates_total", map[string]string{"operation": "obs_summaries", "result": "pass"}); got != 1 {
			return fmt.Errorf("passed gates gained %v, want 1", got)
		}
		if got := delta(before, now, "llm_gateway_eval_pass_calls_total", map[string]string{"operation": "obs_summaries", "result": "pass"}); got != 1 {
			return fmt.Errorf("passed calls gained %v, want 1", got)
		}
		if got := delta(before, now, "llm_gateway_eval_pass_score_sum", op); got != 1 {
			return fmt.Errorf("scores gained %v, want the one score 1", got)
		}
		return nil
	})

	fb := g.post("/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, call.Get("id").String()), http.StatusOK)
	if fb.Get("refund.status").String() != "credited" {
		t.Fatalf("feedback: %s", fb.Raw)
	}
	after := scrape(t, admin)
	if got := delta(before, after, "llm_gateway_refunds_total", map[string]string{"kind": "thumbs_down", "status": "credited"}); got != 1 {
		t.Errorf("credited thumbs_down refunds gained %v, want 1", got)
	}
	if got, want := delta(before, after, "llm_gateway_refunded_usd_total", map[string]string{"kind": "thumbs_down"}),
		call.Get("delivery.cost_usd").Float(); math.Abs(got-want) > 1e-12 || got <= 0 {
		t.Errorf("refunded USD gained %v, want the call's cost %v", got, want)
	}
}

// TestExampleHealth: Caddyfile.example's site answers the liveness and
// readiness checks.
func TestExampleHealth(t *testing.T) {
	origin := startExample(t)
	for _, c := range []struct{ path, status string }{{"/healthz", "ok"}, {"/readyz", "ready"}} {
		resp, err := http.Get(origin + c.path)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || gjson.GetBytes(out, "status").String() != c.status {
			t.Errorf("GET %s: %s %s, want 200 with status %q", c.path, resp.Status, out, c.status)
		}
	}
}
