package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/tidwall/gjson"
)

// startExample loads Caddyfile.example into this process's Caddy, with its
// ports replaced by free ones and its store in a temp dir, and returns the
// gateway's origin (http://127.0.0.1:<port>). The real providers' variables
// are unset, as on a newcomer's machine.
func startExample(t *testing.T) string {
	t.Helper()
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LOCAL_LLM_BASE_URL"} {
		t.Setenv(v, "")
	}
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cfg := strings.NewReplacer(
		":8080", fmt.Sprintf(":%d", port),
		":9099", fmt.Sprintf(":%d", freePort(t)),
		":2019", fmt.Sprintf(":%d", freePort(t)),
		"./data/gateway.db", filepath.Join(t.TempDir(), "gateway.db"),
	).Replace(string(src))
	if !strings.Contains(cfg, "gateway.db") || strings.Contains(cfg, "./data/") {
		t.Fatal("Caddyfile.example's store is not ./data/gateway.db any more; update this test")
	}
	// The access log goes to the test's log, not its output.
	cfg = strings.Replace(cfg, "\tlog {\n\t\tformat json\n\t}", "\tlog {\n\t\toutput discard\n\t}", 1)
	json, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(cfg), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile.example: %v", err)
	}
	if err := caddy.Load(json, true); err != nil {
		t.Fatalf("loading Caddyfile.example: %v", err)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	eventually(t, "the example gateway answers", func() error {
		resp, err := http.Get(origin + "/v1/models")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	return origin
}

// sendDemo makes a request with the demo key (as x-api-key for Anthropic
// paths) and returns the answer.
func sendDemo(t *testing.T, method, url, body string) (*http.Response, gjson.Result) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(url, "/messages") {
		req.Header.Set("X-Api-Key", demoKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer "+demoKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, gjson.ParseBytes(out)
}

// TestExampleRoutesAtOnce: on the default config, with nothing set up, a
// router-1 call is served by the reference at full quality on its cheaper
// partner-network path and billed below the reference's direct price; a
// router-embed-1 call answers; a batch call is queued and its record says
// so.
func TestExampleRoutesAtOnce(t *testing.T) {
	origin := startExample(t)
	resp, ans := sendDemo(t, http.MethodPost, origin+"/v1/chat/completions", chatBody("router-1", "hello", ""))
	d := ans.Get("delivery")
	if resp.StatusCode != http.StatusOK || ans.Get("choices.0.message.content").String() != "Echo: hello" {
		t.Fatalf("router-1: %s %s", resp.Status, ans.Raw)
	}
	if d.Get("provider").String() != "router-net:partner_7" || d.Get("served_by").String() != "router_network" ||
		d.Get("quantization").String() != "full" || d.Get("upgraded").Bool() {
		t.Errorf("router-1 delivery %s, want the reference's full-quality partner path", d.Raw)
	}
	in, out := ans.Get("usage.prompt_tokens").Float(), ans.Get("usage.completion_tokens").Float()
	direct := (in*10 + out*30) / 1e6
	if cost := d.Get("cost_usd").Float(); cost <= 0 || cost > 0.95*direct+1e-12 {
		t.Errorf("router-1 billed %v, want at most 95%% of the direct %v", cost, direct)
	}

	resp, ans = sendDemo(t, http.MethodPost, origin+"/v1/embeddings", `{"model":"router-embed-1","input":"hello"}`)
	if resp.StatusCode != http.StatusOK || len(ans.Get("data.0.embedding").Array()) == 0 {
		t.Errorf("router-embed-1: %s %.300s", resp.Status, ans.Raw)
	}

	resp, ans = sendDemo(t, http.MethodPost, origin+"/v1/chat/completions", chatBody("router-1", "later", `"tier":"batch"`))
	if resp.StatusCode != http.StatusOK || ans.Get("delivery.tier").String() != "batch" || !ans.Get("delivery.eta_ms").Exists() {
		t.Fatalf("batch: %s %s", resp.Status, ans.Raw)
	}
	id := ans.Get("id").String()
	eventually(t, "the batch call's result", func() error {
		_, rec := sendDemo(t, http.MethodGet, origin+"/v1/calls/"+id, "")
		if s := rec.Get("status").String(); s != "succeeded" {
			return fmt.Errorf("status %q", s)
		}
		return nil
	})
}

// TestUsefulErrors: the errors a newcomer meets say what to do.
func TestUsefulErrors(t *testing.T) {
	origin := startExample(t)
	api := origin + "/v1"

	// An unknown model: 404 with the closest ids.
	resp, ans := sendDemo(t, http.MethodPost, api+"/chat/completions", chatBody("router1", "hi", ""))
	if resp.StatusCode != http.StatusNotFound || ans.Get("error.code").String() != "model_not_found" ||
		!strings.Contains(ans.Get("error.message").String(), "router-1") {
		t.Errorf("unknown model: %s %s", resp.Status, ans.Raw)
	}
	assertSpecError(t, []byte(ans.Raw), "invalid_request_error", "model")
	_, ans = sendDemo(t, http.MethodPost, api+"/chat/completions", chatBody("gpt-4o-mini", "hi", ""))
	if msg := ans.Get("error.message").String(); !strings.Contains(msg, "openai/gpt-4o-mini (switched off)") {
		t.Errorf("a switched-off model is not among the closest ids: %s", msg)
	}

	// A configured provider without its credential: the variable to set.
	for _, c := range []struct{ path, body, variable string }{
		{"/chat/completions", chatBody("openai/gpt-4o-mini", "hi", ""), "OPENAI_API_KEY"},
		{"/embeddings", `{"model":"openai/text-embedding-3-small","input":"hi"}`, "OPENAI_API_KEY"},
		{"/messages", `{"model":"anthropic/claude-3-5-haiku-latest","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "ANTHROPIC_API_KEY"},
		{"/chat/completions", chatBody("local/llama3.1", "hi", ""), "LOCAL_LLM_BASE_URL"},
	} {
		resp, ans := sendDemo(t, http.MethodPost, api+c.path, c.body)
		if resp.StatusCode != http.StatusNotFound || ans.Get("error.code").String() != "provider_not_configured" ||
			!strings.Contains(ans.Get("error.message").String(), c.variable) {
			t.Errorf("%s without %s: %s %s", c.path, c.variable, resp.Status, ans.Raw)
		}
	}

	// What cannot cross dialects: 400 naming the member, which no SDK retries.
	resp, ans = sendDemo(t, http.MethodPost, api+"/responses",
		`{"model":"demo-anthropic/demo-claude","input":"hi","previous_response_id":"resp_123"}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("previous_response_id to an Anthropic-dialect model: %s %s", resp.Status, ans.Raw)
	}
	assertSpecError(t, []byte(ans.Raw), "invalid_request_error", "previous_response_id")
	// A model with a path that speaks the dialect takes it there.
	resp, ans = sendDemo(t, http.MethodPost, api+"/responses", `{"model":"demo/demo-chat","input":"hi","previous_response_id":"resp_123"}`)
	if resp.StatusCode == http.StatusBadRequest {
		t.Errorf("previous_response_id to a model with a responses path: %s %s", resp.Status, ans.Raw)
	}

	// Paths no handler serves: a JSON 404 that says where the API is.
	for _, c := range []struct {
		path      string
		anthropic bool
	}{{"/chat/completions", false}, {"/v1/v1/messages", true}, {"/v1/nothing", false}, {"/", false}} {
		resp, ans := sendDemo(t, http.MethodPost, origin+c.path, chatBody("router-1", "hi", ""))
		msg := ans.Get("error.message").String()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" ||
			ans.Get("error.code").String() != "unknown_endpoint" || !strings.Contains(msg, "base URL that ends in /v1") {
			t.Errorf("POST %s: %s %s", c.path, resp.Status, ans.Raw)
		}
		if got := ans.Get("type").String() == "error"; got != c.anthropic {
			t.Errorf("POST %s: Anthropic error shape %v, want %v: %s", c.path, got, c.anthropic, ans.Raw)
		}
	}
	// The reliability API after the gateway still answers its paths.
	if resp, _ := sendDemo(t, http.MethodGet, api+"/operations", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/operations: %s", resp.Status)
	}
}

// TestCountTokens: POST /v1/messages/count_tokens is counted by an
// Anthropic-dialect upstream where the model has one, and estimated (and
// marked so) where it has none.
func TestCountTokens(t *testing.T) {
	origin := startExample(t)
	api := origin + "/v1"
	body := func(model string) string {
		return `{"model":"` + model + `","system":"be brief","messages":[{"role":"user","content":"count the words of this prompt please"}]}`
	}

	resp, ans := sendDemo(t, http.MethodPost, api+"/messages/count_tokens", body("demo-anthropic/demo-claude"))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Gateway-Token-Count") != "upstream" {
		t.Fatalf("count_tokens, Anthropic-dialect model: %s %v %s", resp.Status, resp.Header, ans.Raw)
	}
	counted := ans.Get("input_tokens").Int()
	_, msg := sendDemo(t, http.MethodPost, api+"/messages",
		`{"model":"demo-anthropic/demo-claude","max_tokens":20,"system":"be brief","messages":[{"role":"user","content":"count the words of this prompt please"}]}`)
	if want := msg.Get("usage.input_tokens").Int(); counted != want || counted == 0 {
		t.Errorf("count_tokens says %d, the call's usage %d", counted, want)
	}

	// demo/demo-chat's fallback path is on the Anthropic-dialect provider.
	if resp, _ := sendDemo(t, http.MethodPost, api+"/messages/count_tokens", body("demo/demo-chat")); resp.Header.Get("X-Gateway-Token-Count") != "upstream" {
		t.Errorf("count_tokens, model with an Anthropic-dialect path: %s %v", resp.Status, resp.Header)
	}
	for _, model := range []string{"router-1", "demo/demo-mid-q97"} {
		resp, ans := sendDemo(t, http.MethodPost, api+"/messages/count_tokens", body(model))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Gateway-Token-Count") != "estimate" || ans.Get("input_tokens").Int() <= 0 {
			t.Errorf("count_tokens, %s: %s %v %s", model, resp.Status, resp.Header.Get("X-Gateway-Token-Count"), ans.Raw)
		}
	}

	for _, c := range []struct {
		method, body string
		status       int
		param        string
	}{
		{http.MethodPost, body("demo/demo-embed"), http.StatusBadRequest, "model"},
		{http.MethodPost, body("demo/nope"), http.StatusNotFound, "model"},
		{http.MethodPost, `{"model":"demo-anthropic/demo-claude","messages":[]}`, http.StatusBadRequest, "messages"},
		{http.MethodGet, "", http.StatusMethodNotAllowed, ""},
	} {
		resp, ans := sendDemo(t, c.method, api+"/messages/count_tokens", c.body)
		if resp.StatusCode != c.status || ans.Get("type").String() != "error" {
			t.Errorf("count_tokens %s %s: %s %s, want %d in the Anthropic error shape", c.method, c.body, resp.Status, ans.Raw, c.status)
			continue
		}
		assertSpecError(t, []byte(ans.Raw), "", c.param)
	}
	req, _ := http.NewRequest(http.MethodPost, api+"/messages/count_tokens", strings.NewReader(body("demo-anthropic/demo-claude")))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("count_tokens without a key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
