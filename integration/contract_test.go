package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func chatBody(model, text string, extra string) string {
	b := `{"model":"` + model + `","messages":[{"role":"user","content":"` + text + `"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func TestContract(t *testing.T) {
	g := startGateway(t)

	t.Run("auth", func(t *testing.T) {
		status, body, _ := g.do(http.MethodPost, "/chat/completions", "", chatBody("demo/demo-chat", "hi", ""))
		if status != http.StatusUnauthorized {
			t.Fatalf("no key: %d", status)
		}
		assertSpecError(t, body, "authentication_error", "-")
		status, body, _ = g.do(http.MethodPost, "/chat/completions", "mg_live_wrong00000000000000000000", chatBody("demo/demo-chat", "hi", ""))
		if status != http.StatusUnauthorized {
			t.Fatalf("wrong key: %d", status)
		}
		assertSpecError(t, body, "authentication_error", "-")
		status, _, _ = g.do(http.MethodGet, "/calls", "not-a-key", nil)
		if status != http.StatusUnauthorized {
			t.Fatalf("garbage key on /calls: %d", status)
		}
		// x-api-key is accepted as Anthropic clients send it.
		req, _ := http.NewRequest(http.MethodGet, g.base+"/models", nil)
		req.Header.Set("x-api-key", demoKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("x-api-key: %d", resp.StatusCode)
		}
	})

	t.Run("models", func(t *testing.T) {
		list := g.get("/models", http.StatusOK)
		if list.Get("object").String() != "list" || !strings.Contains(list.Get("data.#.id").Raw, `"demo/demo-chat"`) {
			t.Fatalf("models: %s", list.Raw)
		}
		for _, m := range list.Get("data").Array() {
			if m.Get("object").String() != "model" || m.Get("created").Int() == 0 || m.Get("owned_by").String() == "" {
				t.Fatalf("model entry: %s", m.Raw)
			}
		}
		// The other org may use one model only.
		status, body, _ := g.do(http.MethodGet, "/models", otherKey, nil)
		if status != http.StatusOK || gjson.GetBytes(body, "data.#").Int() != 1 {
			t.Fatalf("other org models: %d %s", status, body)
		}
		status, body, _ = g.do(http.MethodPost, "/chat/completions", otherKey, chatBody("demo/demo-mini", "hi", ""))
		if status != http.StatusForbidden {
			t.Fatalf("model outside the org's list: %d %s", status, body)
		}
		assertSpecError(t, body, "permission_error", "-")
		status, body, _ = g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("nope/nothing", "hi", ""))
		if status != http.StatusNotFound {
			t.Fatalf("unknown model: %d %s", status, body)
		}
		assertSpecError(t, body, "invalid_request_error", "model")
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name, body, param string
		}{
			{"not json", `{"model":`, ""},
			{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "model"},
			{"no messages", `{"model":"demo/demo-chat"}`, "messages"},
			{"empty messages", `{"model":"demo/demo-chat","messages":[]}`, "messages"},
			{"bad role", `{"model":"demo/demo-chat","messages":[{"role":"wizard","content":"x"}]}`, "messages[0].role"},
			{"temperature", chatBody("demo/demo-chat", "x", `"temperature":2.5`), "temperature"},
			{"top_p", chatBody("demo/demo-chat", "x", `"top_p":-0.1`), "top_p"},
			{"max_tokens", chatBody("demo/demo-chat", "x", `"max_tokens":0`), "max_tokens"},
			{"presence", chatBody("demo/demo-chat", "x", `"presence_penalty":3`), "presence_penalty"},
			{"frequency", chatBody("demo/demo-chat", "x", `"frequency_penalty":-2.5`), "frequency_penalty"},
			{"stream type", chatBody("demo/demo-chat", "x", `"stream":"yes"`), "stream"},
			{"tier", chatBody("demo/demo-chat", "x", `"tier":"fastest"`), "tier"},
			{"tier_strict", chatBody("demo/demo-chat", "x", `"tier_strict":1`), "tier_strict"},
			{"forbid", chatBody("demo/demo-chat", "x", `"forbid_atlas_network":"no"`), "forbid_atlas_network"},
			{"operation id empty", chatBody("demo/demo-chat", "x", `"metadata":{"operation_id":""}`), "metadata.operation_id"},
			{"operation id long", chatBody("demo/demo-chat", "x", `"metadata":{"operation_id":"`+strings.Repeat("a", 129)+`"}`), "metadata.operation_id"},
			{"stream on batch", chatBody("demo/demo-chat", "x", `"stream":true,"tier":"batch"`), "stream"},
			{"image url", `{"model":"demo/demo-chat","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].image_url.url"},
			{"unknown operation", chatBody("demo/demo-chat", "x", `"metadata":{"operation_id":"nope"}`), "metadata.operation_id"},
			{"strict tier", chatBody("demo/realtime-only", "x", `"tier":"batch","tier_strict":true`), "tier"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, tc.body)
				if status != http.StatusBadRequest {
					t.Fatalf("status %d: %s", status, body)
				}
				assertSpecError(t, body, "invalid_request_error", tc.param)
			})
		}
		status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/realtime-only", "x", `"tier":"batch","tier_strict":true`))
		if status != http.StatusBadRequest || gjson.GetBytes(body, "error.code").String() != "tier_unavailable" {
			t.Fatalf("tier_unavailable: %d %s", status, body)
		}
		// Nothing was recorded for requests that failed validation.
		if n := g.get("/calls?limit=200", http.StatusOK).Get("data.#").Int(); n != 0 {
			t.Fatalf("%d calls recorded for rejected requests", n)
		}
	})

	t.Run("tier upgrade", func(t *testing.T) {
		r := g.post("/chat/completions", chatBody("demo/realtime-only", "x", `"tier":"batch"`), http.StatusOK)
		if r.Get("delivery.tier").String() != "realtime" || !r.Get("delivery.upgraded").Bool() {
			t.Fatalf("upgrade: %s", r.Get("delivery").Raw)
		}
		r = g.post("/chat/completions", chatBody("demo/demo-chat", "x", `"tier":"batch"`), http.StatusOK)
		if r.Get("delivery.tier").String() != "batch" || !r.Get("delivery.eta_ms").Exists() {
			t.Fatalf("batch: %s", r.Get("delivery").Raw)
		}
	})

	t.Run("gateway fields stripped, unknown fields kept", func(t *testing.T) {
		// The upstream is strict: a gateway-only field reaching it would be a 400.
		r := g.post("/chat/completions", chatBody("demo/demo-chat", "x", `"tier":"realtime","tier_strict":false,"forbid_atlas_network":true`), http.StatusOK)
		if r.Get("delivery.tier").String() != "realtime" {
			t.Fatalf("tier: %s", r.Raw)
		}
		// An unknown field passes through, and the strict upstream names it.
		status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/demo-chat", "x", `"frobnicate":1`))
		if status != http.StatusBadRequest || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "frobnicate") {
			t.Fatalf("unknown field: %d %s", status, body)
		}
	})

	t.Run("fingerprints", func(t *testing.T) {
		a := g.post("/chat/completions", chatBody("demo/demo-chat", "same words", ""), http.StatusOK).Get("delivery.fingerprints")
		b := g.post("/chat/completions", chatBody("demo/demo-mini", "same words", ""), http.StatusOK).Get("delivery.fingerprints")
		if a.Get("prompt").String() != b.Get("prompt").String() {
			t.Fatalf("prompt fingerprint differs across models: %s vs %s", a.Raw, b.Raw)
		}
		if a.Get("exchange").String() != b.Get("exchange").String() {
			t.Fatalf("exchange fingerprint differs for the same exchange: %s vs %s", a.Raw, b.Raw)
		}
		if a.Get("cache").String() == b.Get("cache").String() {
			t.Fatal("cache fingerprint equal across models")
		}
		base := g.post("/chat/completions", chatBody("demo/demo-chat", "same words", ""), http.StatusOK).Get("delivery.fingerprints.cache").String()
		if base != a.Get("cache").String() {
			t.Fatal("cache fingerprint not stable for the same request")
		}
		for _, extra := range []string{`"temperature":0.5`, `"top_p":0.5`, `"max_tokens":9`, `"stop":"x"`, `"seed":7`,
			`"tier":"realtime"`, `"tier_strict":true`} {
			got := g.post("/chat/completions", chatBody("demo/demo-chat", "same words", extra), http.StatusOK).Get("delivery.fingerprints.cache").String()
			if got == base {
				t.Errorf("cache fingerprint unchanged by %s", extra)
			}
		}
		withUser := g.post("/chat/completions", chatBody("demo/demo-chat", "same words", `"user":"u1"`), http.StatusOK).Get("delivery.fingerprints.cache").String()
		if withUser != base {
			t.Error("cache fingerprint changed by user, which is not a listed field")
		}
		other := g.post("/chat/completions", chatBody("demo/demo-chat", "other words", ""), http.StatusOK).Get("delivery.fingerprints")
		if other.Get("prompt").String() == a.Get("prompt").String() {
			t.Fatal("prompt fingerprint equal for different content")
		}
	})

	t.Run("calls", func(t *testing.T) {
		all := g.get("/calls?limit=200", http.StatusOK)
		n := all.Get("data.#").Int()
		if n < 10 {
			t.Fatalf("only %d calls recorded", n)
		}
		// Newest first, and paging with the cursor visits every call once.
		seen := map[string]bool{}
		cursor := ""
		pages := 0
		for {
			path := "/calls?limit=3"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			page := g.get(path, http.StatusOK)
			pages++
			var prev string
			for _, c := range page.Get("data").Array() {
				id := c.Get("id").String()
				if seen[id] {
					t.Fatalf("call %s listed twice", id)
				}
				seen[id] = true
				if prev != "" && c.Get("created_at").String() > prev {
					t.Fatalf("not newest first")
				}
				prev = c.Get("created_at").String()
			}
			if !page.Get("has_more").Bool() {
				if page.Get("next_cursor").Type != gjson.Null && page.Get("next_cursor").Exists() {
					t.Fatalf("next_cursor on the last page: %s", page.Raw)
				}
				break
			}
			cursor = page.Get("next_cursor").String()
		}
		if int64(len(seen)) != n || pages < 2 {
			t.Fatalf("paged %d of %d calls in %d pages", len(seen), n, pages)
		}
		for _, q := range []string{"limit=0", "limit=201", "limit=x"} {
			status, body, _ := g.do(http.MethodGet, "/calls?"+q, demoKey, nil)
			if status != http.StatusBadRequest {
				t.Fatalf("%s: %d", q, status)
			}
			assertSpecError(t, body, "invalid_request_error", "limit")
		}
		status, body, _ := g.do(http.MethodGet, "/calls?cursor=not-a-cursor!", demoKey, nil)
		if status != http.StatusBadRequest {
			t.Fatalf("bad cursor: %d %.300s", status, body)
		}
		status, body, _ = g.do(http.MethodGet, "/calls/chatcmpl-doesnotexist", demoKey, nil)
		if status != http.StatusNotFound {
			t.Fatalf("unknown call: %d", status)
		}
		assertSpecError(t, body, "not_found_error", "-")
		// Another org's key sees none of these calls and may not read them.
		id := all.Get("data.0.id").String()
		status, body, _ = g.do(http.MethodGet, "/calls/"+id, otherKey, nil)
		if status != http.StatusForbidden {
			t.Fatalf("other org reading a call: %d %s", status, body)
		}
		assertSpecError(t, body, "permission_error", "-")
		status, body, _ = g.do(http.MethodGet, "/calls", otherKey, nil)
		if status != http.StatusOK || gjson.GetBytes(body, "data.#").Int() != 0 {
			t.Fatalf("other org's list: %s", body)
		}
	})

	t.Run("unknown endpoint", func(t *testing.T) {
		status, body, _ := g.do(http.MethodGet, "/nothing-here", demoKey, nil)
		if status != http.StatusNotFound {
			t.Fatalf("status %d", status)
		}
		assertSpecError(t, body, "invalid_request_error", "")
	})
}
