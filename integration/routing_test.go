package integration

import (
	"github.com/caddyserver/caddy/v2"

	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

const (
	brokeKey   = "mg_live_broke000000000000000000000"
	topupKey   = "mg_live_topup000000000000000000000"
	limitedKey = "mg_live_limited0000000000000000000"
)

const routingLLM = `
		org broke {
			key ` + brokeKey + `
		}
		org topup {
			key ` + topupKey + `
			auto_topup 5 10
		}
		org limited {
			key ` + limitedKey + `
			rate_limit {
				requests_per_minute 2
			}
		}
		provider router-net:partner_7 {
			dialect openai
			base_url {{UPSTREAM}}/v1
		}
		model demo/ref-chat {
			price 10 30
			path demo demo-chat
		}
		model demo/open-chat {
			open_weight
			price 2 6
			path router-net:partner_7 demo-chat {
				served_by router_network
				price 0.5 1
			}
			path demo demo-chat
		}
		model demo/pricey {
			price 100000 100000
			path demo demo-chat
		}
		model demo/free-chat {
			price 0 0
			path demo demo-chat
		}
		model demo/flaky {
			price 1 1
			path down demo-chat
			path demo demo-chat
		}
		model demo/embed-multi {
			embedding
			open_weight
			price 0.02 0
			path demo demo-embed
			path demo demo-embed {
				quantization q8
				price 0.01 0
			}
			path router-net:partner_7 demo-embed {
				served_by router_network
				quantization q4
			}
		}
		router router-1 {
			reference demo/ref-chat
			pool demo/open-chat
		}
		router router-embed-1 {
			reference demo/demo-embed
		}
`

func TestRoutingAndBilling(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: routingLLM})

	t.Run("routers listed", func(t *testing.T) {
		ids := g.get("/models", http.StatusOK).Get("data.#.id").Raw
		if !strings.Contains(ids, `"router-1"`) || !strings.Contains(ids, `"router-embed-1"`) {
			t.Fatalf("models: %s", ids)
		}
	})

	t.Run("router-1 without an operation keeps quality and bills below direct", func(t *testing.T) {
		r := g.post("/chat/completions", chatBody("router-1", "route me", ""), http.StatusOK)
		d := r.Get("delivery")
		if r.Get("model").String() != "router-1" || d.Get("provider").String() != "demo" || d.Get("quantization").String() != "full" {
			t.Fatalf("routed: %s", r.Raw)
		}
		in, out := r.Get("usage.prompt_tokens").Float(), r.Get("usage.completion_tokens").Float()
		direct := (in*10 + out*30) / 1e6
		if got := d.Get("cost_usd").Float(); got > direct*0.95+1e-12 || got < direct*0.95-1e-9 {
			t.Fatalf("routed cost %v, direct %v", got, direct)
		}
		rec := g.get("/calls/"+r.Get("id").String(), http.StatusOK)
		if rec.Get("upstream_cost_usd").Float() != direct || rec.Get("path_key").String() != "demo/demo-chat@full" {
			t.Fatalf("record: %.500s", rec.Raw)
		}
	})

	t.Run("partner network and forbid_atlas_network", func(t *testing.T) {
		r := g.post("/chat/completions", chatBody("demo/open-chat", "partner", ""), http.StatusOK)
		if r.Get("delivery.served_by").String() != "router_network" || r.Get("delivery.provider").String() != "router-net:partner_7" {
			t.Fatalf("partner path: %s", r.Get("delivery").Raw)
		}
		r = g.post("/chat/completions", chatBody("demo/open-chat", "partner", `"forbid_atlas_network":true`), http.StatusOK)
		if r.Get("delivery.served_by").String() != "provider" || r.Get("delivery.provider").String() != "demo" {
			t.Fatalf("forbidden partner path: %s", r.Get("delivery").Raw)
		}
		// Pinned calls bill the model's direct price whatever path served.
		in, out := r.Get("usage.prompt_tokens").Float(), r.Get("usage.completion_tokens").Float()
		if got := r.Get("delivery.cost_usd").Float(); math.Abs(got-(in*2+out*6)/1e6) > 1e-12 {
			t.Fatalf("pinned cost %v", got)
		}
	})

	t.Run("batch tier is queued and billed at its multiplier", func(t *testing.T) {
		r := g.post("/chat/completions", chatBody("demo/ref-chat", "later please", `"tier":"batch"`), http.StatusOK)
		d := r.Get("delivery")
		if r.Get("choices.#").Int() != 0 || d.Get("tier").String() != "batch" || d.Get("eta_ms").Int() <= 0 || d.Get("cost_usd").Type != gjson.Null {
			t.Fatalf("batch answer: %s", r.Raw)
		}
		var rec gjson.Result
		eventually(t, "batch result", func() error {
			rec = g.get("/calls/"+r.Get("id").String(), http.StatusOK)
			if s := rec.Get("status").String(); s != "succeeded" {
				return errorf("status %s", s)
			}
			return nil
		})
		if rec.Get("response_payload.choices.0.message.content").String() != "Echo: later please" {
			t.Fatalf("batch record: %.500s", rec.Raw)
		}
		in, out := rec.Get("prompt_tokens").Float(), rec.Get("completion_tokens").Float()
		if got := rec.Get("cost_usd").Float(); math.Abs(got-0.5*(in*10+out*30)/1e6) > 1e-12 {
			t.Fatalf("batch cost %v: %.300s", got, rec.Raw)
		}
		for _, path := range []string{"/messages", "/responses"} {
			body := `{"model":"demo/ref-chat","max_tokens":20,"tier":"batch","messages":[{"role":"user","content":"x"}]}`
			if path == "/responses" {
				body = `{"model":"demo/ref-chat","tier":"batch","input":"x"}`
			}
			a := g.post(path, body, http.StatusOK)
			if !a.Get("delivery.eta_ms").Exists() || !strings.HasPrefix(a.Get("id").String(), map[string]string{"/messages": "msg_", "/responses": "resp_"}[path]) {
				t.Fatalf("%s batch answer: %s", path, a.Raw)
			}
		}
	})

	t.Run("no credit left", func(t *testing.T) {
		// At 0.1 USD a token, a call without max_tokens may cost far more
		// than the 5 USD starting credit: it is refused before any upstream
		// call, with what it needs and what is available.
		status, body, _ := g.do(http.MethodPost, "/chat/completions", brokeKey, chatBody("demo/pricey", "spend it", ""))
		if status != http.StatusTooManyRequests {
			t.Fatalf("call whose worst case exceeds the credit: %d %s", status, body)
		}
		assertSpecError(t, body, "insufficient_quota", "-")
		if msg := gjson.GetBytes(body, "error.message").String(); !strings.Contains(msg, "may cost up to") || !strings.Contains(msg, "5.000000 USD available") {
			t.Fatalf("message %q does not say what the call needs and what is available", msg)
		}
		// With max_tokens the worst case fits: the call is served and
		// charged; the next one no longer fits in what is left.
		small := chatBody("demo/pricey", "spend it", `"max_tokens":5`)
		status, body, _ = g.do(http.MethodPost, "/chat/completions", brokeKey, small)
		if status != http.StatusOK {
			t.Fatalf("first call: %d %s", status, body)
		}
		status, body, _ = g.do(http.MethodPost, "/chat/completions", brokeKey, small)
		if status != http.StatusTooManyRequests || gjson.GetBytes(body, "error.code").String() != "insufficient_quota" {
			t.Fatalf("second call: %d %s", status, body)
		}
		// Free models need no credit.
		status, body, _ = g.do(http.MethodPost, "/chat/completions", brokeKey, chatBody("demo/free-chat", "free", ""))
		if status != http.StatusOK || gjson.GetBytes(body, "delivery.cost_usd").Float() != 0 {
			t.Fatalf("free model: %d %s", status, body)
		}
	})

	t.Run("auto top-up keeps the org serving", func(t *testing.T) {
		// Each call reserves about 4.8 USD and is charged about 1 USD:
		// without the top-up (under 5 USD, credit 10) the second call
		// would not fit in what the first one left.
		for i := 0; i < 3; i++ {
			status, body, _ := g.do(http.MethodPost, "/chat/completions", topupKey, chatBody("demo/pricey", "spend", `"max_tokens":5`))
			if status != http.StatusOK {
				t.Fatalf("call %d with auto top-up: %d %s", i, status, body)
			}
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			if status, body, _ := g.do(http.MethodPost, "/chat/completions", limitedKey, chatBody("demo/demo-chat", "x", "")); status != http.StatusOK {
				t.Fatalf("call %d: %d %s", i, status, body)
			}
		}
		status, body, hdr := g.do(http.MethodPost, "/chat/completions", limitedKey, chatBody("demo/demo-chat", "x", ""))
		if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
			t.Fatalf("third call: %d %s", status, body)
		}
		assertSpecError(t, body, "rate_limit_error", "-")
	})

	t.Run("response cache", func(t *testing.T) {
		req := func(extra string) (int, []byte, http.Header) {
			r, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(chatBody("demo/demo-chat", "cache me "+extra, "")))
			r.Header.Set("Authorization", "Bearer "+demoKey)
			r.Header.Set("X-Gateway-Cache", "use")
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b := make([]byte, 0, 4096)
			buf := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(buf)
				b = append(b, buf[:n]...)
				if err != nil {
					break
				}
			}
			return resp.StatusCode, b, resp.Header
		}
		_, first, h1 := req("")
		_, second, h2 := req("")
		if h1.Get("X-Gateway-Cache") != "miss" || h2.Get("X-Gateway-Cache") != "hit" {
			t.Fatalf("cache headers %q %q", h1.Get("X-Gateway-Cache"), h2.Get("X-Gateway-Cache"))
		}
		if gjson.GetBytes(second, "delivery.cost_usd").Float() != 0 || gjson.GetBytes(first, "delivery.cost_usd").Float() == 0 ||
			gjson.GetBytes(second, "choices.0.message.content").String() != gjson.GetBytes(first, "choices.0.message.content").String() ||
			gjson.GetBytes(second, "id").String() == gjson.GetBytes(first, "id").String() {
			t.Fatalf("hit: %s\nmiss: %s", second, first)
		}
		rec := g.get("/calls/"+gjson.GetBytes(second, "id").String(), http.StatusOK)
		if rec.Get("cache").String() != "hit" || rec.Get("attempts.#").Int() != 0 || rec.Get("cost_usd").Float() != 0 {
			t.Fatalf("hit record: %.400s", rec.Raw)
		}
		// Without the opt-in the cache is not used; errors are never cached.
		status, _, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/demo-chat", "cache me ", ""))
		if status != http.StatusOK {
			t.Fatal(status)
		}
		s1, _, _ := req("[[status:400]]")
		s2, _, h := req("[[status:400]]")
		if s1 != http.StatusBadRequest || s2 != http.StatusBadRequest || h.Get("X-Gateway-Cache") == "hit" {
			t.Fatalf("error cached: %d %d %q", s1, s2, h.Get("X-Gateway-Cache"))
		}
	})

	t.Run("failing paths cool down", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			g.post("/chat/completions", chatBody("demo/flaky", "x", ""), http.StatusOK)
		}
		r := g.post("/chat/completions", chatBody("demo/flaky", "x", ""), http.StatusOK)
		atts := g.get("/calls/"+r.Get("id").String(), http.StatusOK).Get("attempts")
		if atts.Get("#").Int() != 2 || !strings.Contains(atts.Get("0.error").String(), "cooling down") || atts.Get("1.provider").String() != "demo" {
			t.Fatalf("attempts after repeated failures: %s", atts.Raw)
		}
	})

	t.Run("embeddings quantization selects the path", func(t *testing.T) {
		for _, q := range []string{"full", "q8", "q4"} {
			r := g.post("/embeddings", `{"model":"demo/embed-multi","input":"x","quantization":"`+q+`"}`, http.StatusOK)
			if r.Get("delivery.quantization").String() != q {
				t.Fatalf("quantization %s: %s", q, r.Get("delivery").Raw)
			}
		}
		// The only q4 path is on the partner network: forbidding it leaves none.
		status, body, _ := g.do(http.MethodPost, "/embeddings", demoKey, `{"model":"demo/embed-multi","input":"x","quantization":"q4","forbid_atlas_network":true}`)
		if status != http.StatusBadRequest {
			t.Fatalf("q4 without the partner network: %d %s", status, body)
		}
		assertSpecError(t, body, "invalid_request_error", "-")
	})

	t.Run("router-embed-1", func(t *testing.T) {
		r := g.post("/embeddings", `{"model":"router-embed-1","input":"embed me"}`, http.StatusOK)
		if r.Get("data.#").Int() != 1 || r.Get("model").String() != "router-embed-1" || r.Get("delivery.provider").String() != "demo" {
			t.Fatalf("router-embed-1: %.400s", r.Raw)
		}
	})
}

type testErr string

func (e testErr) Error() string { return string(e) }

func errorf(format string, args ...any) error { return testErr(fmt.Sprintf(format, args...)) }

// TestBatchQueueSurvivesRestart stops the gateway while a queued call is
// running; the next start runs it to the end.
func TestBatchQueueSurvivesRestart(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: routingLLM})
	r := g.post("/chat/completions", chatBody("demo/ref-chat", "[[sleep:700]] slow batch", `"tier":"batch"`), http.StatusOK)
	id := r.Get("id").String()
	time.Sleep(100 * time.Millisecond)
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	g2 := startGatewayOpts(t, gatewayOpts{llm: routingLLM, store: g.store})
	eventually(t, "batch result after the restart", func() error {
		rec := g2.get("/calls/"+id, http.StatusOK)
		if s := rec.Get("status").String(); s != "succeeded" {
			return errorf("status %s", s)
		}
		return nil
	})
}
