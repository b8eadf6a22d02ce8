package integration

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

const (
	walletKey  = "mg_live_wallet00000000000000000000"
	crossKey   = "mg_live_crossing000000000000000000"
	walletOrgs = `
		org wallet {
			key ` + walletKey + `
			auto_topup 1 20
		}
		org crossing {
			key ` + crossKey + `
			auto_topup 10 0.01
		}
		model demo/capped {
			price 0.5 1.5
			max_output_tokens 100
			path demo demo-chat
		}
		model demo/dear {
			price 100000 100000
			path demo demo-chat
		}`
)

// adminPost posts body to the admin API and returns status and answer.
func adminPost(t *testing.T, g *gateway, path, body string) (int, gjson.Result) {
	t.Helper()
	resp, err := http.Post("http://"+g.admin+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, gjson.ParseBytes(raw)
}

// TestBalanceLedgerUsage: an org sees its balance (with what calls in
// flight hold), its ledger newest first and its usage by day, model, key and
// operation; an operator credits it and changes its auto top-up at run time.
func TestBalanceLedgerUsage(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: walletOrgs})
	get := func(path string) gjson.Result {
		t.Helper()
		st, b, _ := g.do(http.MethodGet, path, walletKey, nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, st, b)
		}
		return gjson.ParseBytes(b)
	}
	b := get("/balance")
	if b.Get("object").Str != "balance" || b.Get("available_usd").Float() != 5 || b.Get("reserved_usd").Float() != 0 ||
		b.Get("currency").Str != "usd" || b.Get("auto_topup.threshold_usd").Float() != 1 || b.Get("auto_topup.amount_usd").Float() != 20 {
		t.Fatalf("balance: %s", b.Raw)
	}

	t.Run("a call in flight shows as reserved", func(t *testing.T) {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The demo upstream holds its answer for 1.5 s.
			if st, body, _ := g.do(http.MethodPost, "/chat/completions", walletKey, chatBody("demo/demo-chat", "slow [[sleep:1500]]", `"max_tokens":50`)); st != http.StatusOK {
				t.Errorf("slow call: %d %s", st, body)
			}
		}()
		eventually(t, "the reservation shows", func() error {
			if r := get("/balance").Get("reserved_usd").Float(); r <= 0 {
				return errorf("reserved %v", r)
			}
			return nil
		})
		wg.Wait()
		b := get("/balance")
		if b.Get("reserved_usd").Float() != 0 || b.Get("available_usd").Float() >= 5 || b.Get("balance_usd").Float() != b.Get("available_usd").Float() {
			t.Fatalf("after the call: %s", b.Raw)
		}
	})

	var ids []string
	for i := range 3 {
		st, body, _ := g.do(http.MethodPost, "/chat/completions", walletKey, chatBody("demo/demo-chat", fmt.Sprint("spend ", i), ""))
		if st != http.StatusOK {
			t.Fatalf("%d %s", st, body)
		}
		ids = append(ids, gjson.GetBytes(body, "id").Str)
	}

	t.Run("ledger newest first, paged", func(t *testing.T) {
		l := get("/ledger?limit=2")
		if l.Get("object").Str != "list" || l.Get("data.#").Int() != 2 || !l.Get("has_more").Bool() {
			t.Fatalf("ledger page: %s", l.Raw)
		}
		if l.Get("data.0.kind").Str != "charge" || l.Get("data.0.call_id").Str != ids[2] || l.Get("data.0.amount_usd").Float() >= 0 {
			t.Fatalf("newest entry: %s", l.Get("data.0").Raw)
		}
		all := get("/ledger?limit=200")
		n := all.Get("data.#").Int()
		if last := all.Get(fmt.Sprintf("data.%d", n-1)); last.Get("kind").Str != "topup" || last.Get("reason").Str != "starting credit" {
			t.Fatalf("oldest entry: %s", last.Raw)
		}
		if st, body, _ := g.do(http.MethodGet, "/ledger?limit=0", walletKey, nil); st != http.StatusBadRequest {
			t.Fatalf("limit=0: %d %s", st, body)
		}
	})

	t.Run("usage by day, model and key", func(t *testing.T) {
		u := get("/usage")
		if u.Get("object").Str != "usage" || u.Get("total.calls").Int() != 4 || u.Get("total.cost_usd").Float() <= 0 ||
			u.Get("by_model.#").Int() != 1 || u.Get("by_model.0.key").Str != "demo/demo-chat" || u.Get("by_day.#").Int() != 1 ||
			u.Get("by_key.#").Int() != 1 || u.Get("by_key.0.calls").Int() != 4 {
			t.Fatalf("usage: %s", u.Raw)
		}
		for _, bad := range []string{"/usage?from=yesterday", "/usage?from=2026-01-02&to=2026-01-01", "/usage?from=2020-01-01&to=2026-01-01"} {
			if st, body, _ := g.do(http.MethodGet, bad, walletKey, nil); st != http.StatusBadRequest || gjson.GetBytes(body, "error.param").Str != "from" {
				t.Errorf("%s: %d %s", bad, st, body)
			}
		}
	})

	t.Run("operator credit and auto top-up", func(t *testing.T) {
		before := get("/balance").Get("available_usd").Float()
		st, e := adminPost(t, g, "/llm/credit", `{"org":"wallet","usd":20,"reason":"goodwill"}`)
		if st != http.StatusCreated || e.Get("kind").Str != "credit" || e.Get("amount_usd").Float() != 20 {
			t.Fatalf("credit: %d %s", st, e.Raw)
		}
		if after := get("/balance").Get("available_usd").Float(); after-before < 19.999999 || after-before > 20.000001 {
			t.Fatalf("balance %v -> %v after a 20 USD credit", before, after)
		}
		if st, _ := adminPost(t, g, "/llm/credit", `{"org":"walet","usd":20}`); st != http.StatusNotFound {
			t.Fatalf("credit of a mistyped org: %d", st)
		}
		if st, _ := adminPost(t, g, "/llm/credit", `{"org":"wallet","usd":-3}`); st != http.StatusBadRequest {
			t.Fatalf("negative credit: %d", st)
		}
		st, _ = adminPost(t, g, "/llm/auto_topup", `{"org":"wallet","threshold_usd":3,"amount_usd":7}`)
		if b := get("/balance"); st != http.StatusOK || b.Get("auto_topup.threshold_usd").Float() != 3 || b.Get("auto_topup.amount_usd").Float() != 7 {
			t.Fatalf("auto top-up set: %d %s", st, b.Raw)
		}
	})

	t.Run("a model's maximum output", func(t *testing.T) {
		st, body, _ := g.do(http.MethodPost, "/chat/completions", walletKey, chatBody("demo/capped", "x", `"max_tokens":101`))
		if st != http.StatusBadRequest || gjson.GetBytes(body, "error.param").Str != "max_tokens" {
			t.Fatalf("max_tokens above the model's maximum: %d %s", st, body)
		}
		st, body, _ = g.do(http.MethodPost, "/responses", walletKey, `{"model":"demo/capped","input":"x","max_output_tokens":500}`)
		if st != http.StatusBadRequest || gjson.GetBytes(body, "error.param").Str != "max_output_tokens" {
			t.Fatalf("max_output_tokens above the model's maximum: %d %s", st, body)
		}
		if st, body, _ := g.do(http.MethodPost, "/chat/completions", walletKey, chatBody("demo/capped", "x", `"max_tokens":100`)); st != http.StatusOK {
			t.Fatalf("max_tokens at the maximum: %d %s", st, body)
		}
	})

	t.Run("a refunded call shows its refund", func(t *testing.T) {
		st, body, _ := g.do(http.MethodPost, "/feedback", walletKey, fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, ids[0]))
		if st != http.StatusOK {
			t.Fatalf("feedback: %d %s", st, body)
		}
		st, body, _ = g.do(http.MethodGet, "/calls/"+ids[0], walletKey, nil)
		c := gjson.ParseBytes(body)
		if st != http.StatusOK || c.Get("refund.reason").Str != "thumbs_down" || c.Get("refund.amount_usd").Float() != c.Get("cost_usd").Float() {
			t.Fatalf("refunded call: %d %.600s", st, body)
		}
	})
}

// TestAutoTopupOncePerCrossing: an org under its threshold is topped up
// once, and calls refused afterwards do not top it up again.
func TestAutoTopupOncePerCrossing(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: walletOrgs})
	// Every call to demo/dear needs far more than the org has; each one
	// is refused, concurrently and one after another.
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, body, _ := g.do(http.MethodPost, "/chat/completions", crossKey, chatBody("demo/dear", "x", "")); st != http.StatusTooManyRequests {
				t.Errorf("dear call: %d %s", st, body)
			}
		}()
	}
	wg.Wait()
	for range 4 {
		if st, _, _ := g.do(http.MethodPost, "/chat/completions", crossKey, chatBody("demo/dear", "x", "")); st != http.StatusTooManyRequests {
			t.Fatalf("dear call: %d", st)
		}
	}
	st, body, _ := g.do(http.MethodGet, "/ledger?limit=200", crossKey, nil)
	if st != http.StatusOK {
		t.Fatalf("%d %s", st, body)
	}
	topups := 0
	for _, e := range gjson.GetBytes(body, "data").Array() {
		if e.Get("reason").Str == "auto top-up" {
			topups++
		}
	}
	if topups != 1 {
		t.Fatalf("%d auto top-ups for one crossing of the threshold: %s", topups, body)
	}
}

// TestOrgAdminSetsAutoTopup: an admin key of the org changes the org's
// auto top-up over the API; an ordinary key may not.
func TestOrgAdminSetsAutoTopup(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: walletOrgs})
	st, k := adminPost(t, g, "/llm/keys", `{"org":"wallet","admin":true,"name":"ops"}`)
	if st != http.StatusCreated || k.Get("key").Str == "" {
		t.Fatalf("creating an admin key: %d %s", st, k.Raw)
	}
	admin := k.Get("key").Str
	body := `{"threshold_usd":2.5,"amount_usd":15}`
	if st, b, _ := g.do(http.MethodPost, "/balance/auto_topup", walletKey, body); st != http.StatusForbidden {
		t.Fatalf("an ordinary key set the auto top-up: %d %s", st, b)
	}
	st2, b, _ := g.do(http.MethodPost, "/balance/auto_topup", admin, body)
	got := gjson.ParseBytes(b)
	if st2 != http.StatusOK || got.Get("auto_topup.threshold_usd").Float() != 2.5 || got.Get("auto_topup.amount_usd").Float() != 15 {
		t.Fatalf("admin key: %d %s", st2, b)
	}
	if st, b, _ := g.do(http.MethodPost, "/balance/auto_topup", admin, `{"threshold_usd":-1,"amount_usd":15}`); st != http.StatusBadRequest ||
		gjson.GetBytes(b, "error.param").Str != "threshold_usd" {
		t.Fatalf("negative threshold: %d %s", st, b)
	}
	// The setting is the one in force for every key of the org.
	if st, b, _ := g.do(http.MethodGet, "/balance", walletKey, nil); st != http.StatusOK || gjson.GetBytes(b, "auto_topup.amount_usd").Float() != 15 {
		t.Fatalf("balance after the change: %d %s", st, b)
	}
}
