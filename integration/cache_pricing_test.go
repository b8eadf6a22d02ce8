package integration

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// agentMessages is a messages request as a coding agent sends it: a long
// system prompt and tool marked for the provider's prompt cache, and a
// last turn whose directives make the demo upstream report cache reads and
// writes as a caching provider does.
func agentMessages(model string, stream bool, read, write int) string {
	return fmt.Sprintf(`{"model":%q,"max_tokens":200,"stream":%v,
		"system":[{"type":"text","text":"You are a careful coding agent. `+agentRules+`","cache_control":{"type":"ephemeral"}}],
		"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":[{"type":"text","text":"fix the bug [[cache_read:%d]] [[cache_write:%d]]","cache_control":{"type":"ephemeral","ttl":"5m"}}]}]}`,
		model, stream, read, write)
}

// agentRules pads a prompt to the size of the cached prefix the demo
// upstream is asked to report, as a real agent's system prompt is: a
// reservation assumes at most two bytes of body per input token, and a
// bill never exceeds the reservation.
var agentRules = strings.Repeat("Follow the style guide. ", 8_000)

// TestPromptCacheBilledByClass: an Anthropic-dialect upstream reports
// cache reads and writes; each client dialect sees them in its own fields,
// the call keeps them, and the bill is the direct price by class, checked
// to the pico-dollar against a hand computation from the recorded counts.
// demo-anthropic/demo-claude is priced 0.80 / 4.00 per 1M tokens, so at the
// Anthropic ratios a cache read costs 0.08 and a 5-minute write 1.00.
func TestPromptCacheBilledByClass(t *testing.T) {
	g := startGateway(t)
	const read, write = 40_000, 4_000 // with the prompt, within what ~190 KB of agentRules holds
	pico := func(x float64) int64 { return int64(math.Round(x * 1e12)) }
	check := func(t *testing.T, id string, inPrice, readPrice, writePrice, outPrice float64) gjson.Result {
		t.Helper()
		rec := g.get("/calls/"+id, http.StatusOK)
		in, out := rec.Get("prompt_tokens").Int(), rec.Get("completion_tokens").Int()
		r, w := rec.Get("cache_read_tokens").Int(), rec.Get("cache_write_tokens").Int()
		if r != read || w != write || in <= read+write || out <= 0 {
			t.Fatalf("recorded tokens in %d (read %d, written %d) out %d: %.300s", in, r, w, out, rec.Raw)
		}
		// Hand computation, in pico-dollars per token class.
		perToken := func(usdPer1M float64) int64 { return int64(math.Round(usdPer1M * 1e6)) }
		want := (in-r-w)*perToken(inPrice) + r*perToken(readPrice) + w*perToken(writePrice) + out*perToken(outPrice)
		if got := pico(rec.Get("cost_usd").Float()); got != want {
			t.Fatalf("billed %d pico-USD, want %d (all input at the input price would be %d)", got, want,
				in*perToken(inPrice)+out*perToken(outPrice))
		}
		return rec
	}

	t.Run("messages client, Anthropic upstream", func(t *testing.T) {
		a := g.post("/messages", agentMessages("demo-anthropic/demo-claude", false, read, write), http.StatusOK)
		u := a.Get("usage")
		if u.Get("cache_read_input_tokens").Int() != read || u.Get("cache_creation_input_tokens").Int() != write ||
			u.Get("input_tokens").Int() <= 0 || u.Get("input_tokens").Int() >= read {
			t.Fatalf("usage %s: want the cache classes apart from input_tokens", u.Raw)
		}
		rec := check(t, a.Get("id").String(), 0.8, 0.08, 1.0, 4)
		if d := pico(a.Get("delivery.cost_usd").Float()); d != pico(rec.Get("cost_usd").Float()) {
			t.Fatalf("delivery cost %v, record %v", a.Get("delivery.cost_usd").Float(), rec.Get("cost_usd").Float())
		}
	})

	t.Run("chat and responses clients, Anthropic upstream", func(t *testing.T) {
		text := fmt.Sprintf("%s fix the bug [[cache_read:%d]] [[cache_write:%d]]", agentRules, read, write)
		a := g.post("/chat/completions", chatBody("demo-anthropic/demo-claude", text, ""), http.StatusOK)
		if a.Get("usage.prompt_tokens_details.cached_tokens").Int() != read || a.Get("usage.prompt_tokens").Int() <= read+write {
			t.Fatalf("chat usage %s", a.Get("usage").Raw)
		}
		check(t, a.Get("id").String(), 0.8, 0.08, 1.0, 4)
		a = g.post("/responses", fmt.Sprintf(`{"model":"demo-anthropic/demo-claude","input":%q}`, text), http.StatusOK)
		if a.Get("usage.input_tokens_details.cached_tokens").Int() != read {
			t.Fatalf("responses usage %s", a.Get("usage").Raw)
		}
		check(t, a.Get("id").String(), 0.8, 0.08, 1.0, 4)
	})

	t.Run("streams keep the classes", func(t *testing.T) {
		text := fmt.Sprintf("%s fix the bug [[cache_read:%d]] [[cache_write:%d]]", agentRules, read, write)
		for _, c := range []struct{ name, path, body string }{
			{"messages, native", "/messages", agentMessages("demo-anthropic/demo-claude", true, read, write)},
			{"chat from messages", "/chat/completions", chatBody("demo-anthropic/demo-claude", text, `"stream":true,"stream_options":{"include_usage":true}`)},
			{"responses from messages", "/responses", fmt.Sprintf(`{"model":"demo-anthropic/demo-claude","stream":true,"input":%q}`, text)},
		} {
			t.Run(c.name, func(t *testing.T) {
				st, b, _ := g.do(http.MethodPost, c.path, demoKey, c.body)
				if st != http.StatusOK {
					t.Fatalf("%d %s", st, b)
				}
				id := firstStreamID(b)
				switch c.path {
				case "/messages":
					if !strings.Contains(string(b), fmt.Sprintf(`"cache_read_input_tokens":%d`, read)) {
						t.Fatalf("message_start lacks the cache read: %.600s", b)
					}
				case "/chat/completions":
					if !strings.Contains(string(b), fmt.Sprintf(`"prompt_tokens_details":{"cached_tokens":%d}`, read)) {
						t.Fatalf("usage chunk lacks cached_tokens: %s", b[max(0, len(b)-900):])
					}
				case "/responses":
					if !strings.Contains(string(b), fmt.Sprintf(`"cached_tokens":%d`, read)) {
						t.Fatalf("response.completed lacks cached_tokens: %s", b[max(0, len(b)-1200):])
					}
				}
				check(t, id, 0.8, 0.08, 1.0, 4)
			})
		}
	})

	t.Run("OpenAI upstream: cached input at half price", func(t *testing.T) {
		// demo/demo-chat is priced 0.50 / 1.50: cached input 0.25, and
		// OpenAI bills no premium for writing its cache.
		text := fmt.Sprintf("%s fix the bug [[cache_read:%d]] [[cache_write:%d]]", agentRules, read, write)
		// The demo echoes the prompt: max_tokens makes room for that in
		// the reservation, which a bill never exceeds.
		a := g.post("/chat/completions", chatBody("demo/demo-chat", text, `"max_tokens":40000`), http.StatusOK)
		if a.Get("usage.prompt_tokens_details.cached_tokens").Int() != read {
			t.Fatalf("chat usage %s", a.Get("usage").Raw)
		}
		rec := g.get("/calls/"+a.Get("id").String(), http.StatusOK)
		in, out := rec.Get("prompt_tokens").Int(), rec.Get("completion_tokens").Int()
		if rec.Get("cache_read_tokens").Int() != read || rec.Get("cache_write_tokens").Int() != 0 {
			t.Fatalf("record: %.300s", rec.Raw)
		}
		want := (in-read)*500_000 + read*250_000 + out*1_500_000
		if got := pico(rec.Get("cost_usd").Float()); got != want {
			t.Fatalf("billed %d pico-USD, want %d", got, want)
		}
	})

	t.Run("cache hints pass through and do not split the response cache", func(t *testing.T) {
		// The Anthropic upstream gets cache_control as sent; an OpenAI
		// upstream gets the request without it, and no error.
		for _, model := range []string{"demo-anthropic/demo-claude", "demo/demo-chat"} {
			a := g.post("/messages", agentMessages(model, false, 0, 0), http.StatusOK)
			if a.Get("type").String() != "message" {
				t.Fatalf("%s: %s", model, a.Raw)
			}
		}
		body := agentMessages("demo-anthropic/demo-claude", false, 0, 0)
		plain := strings.NewReplacer(`,"cache_control":{"type":"ephemeral"}`, "", `,"cache_control":{"type":"ephemeral","ttl":"5m"}`, "").Replace(body)
		if plain == body {
			t.Fatal("the hints were not removed")
		}
		fps := map[string]bool{}
		for _, b := range []string{body, plain} {
			fps[g.post("/messages", b, http.StatusOK).Get("delivery.fingerprints.cache").String()] = true
		}
		if len(fps) != 1 {
			t.Fatalf("cache hints changed the cache fingerprint: %v", fps)
		}
	})
}
