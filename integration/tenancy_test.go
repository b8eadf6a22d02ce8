package integration

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/reliability"
)

const (
	tenantAKey = "mg_live_tenanta00000000000000000000"
	tenantBKey = "mg_live_tenantb00000000000000000000"
)

// tenant is one org of the tenancy suite and what it made.
type tenant struct {
	name, key string
	calls     []string
}

// TestTenancy runs two orgs side by side over every model endpoint, the
// response cache, the batch queue, the calls API, feedback and the ledger,
// and fails on any read, answer or charge that crosses from one to the
// other.
func TestTenancy(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: `
		org tenant-a {
			key ` + tenantAKey + `
		}
		org tenant-b {
			key ` + tenantBKey + `
		}`})
	a := &tenant{name: "tenant-a", key: tenantAKey}
	b := &tenant{name: "tenant-b", key: tenantBKey}
	cached := func(key, body string) (int, []byte, http.Header) {
		r, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("X-Gateway-Cache", "use")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		if _, err := fmt.Fprint(&sb, ""); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, []byte(sb.String()), resp.Header
	}
	record := func(tn *tenant, status int, body []byte) {
		t.Helper()
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", tn.name, status, body)
		}
		tn.calls = append(tn.calls, gjson.GetBytes(body, "id").String())
	}

	t.Run("response cache is per org and covers unknown members", func(t *testing.T) {
		secret := chatBody("demo/demo-chat", "tenant A's confidential prompt", "")
		st, body, h := cached(a.key, secret)
		record(a, st, body)
		if h.Get("X-Gateway-Cache") != "miss" {
			t.Fatalf("A's first call: cache %q", h.Get("X-Gateway-Cache"))
		}
		st, body, h = cached(a.key, secret)
		record(a, st, body)
		if h.Get("X-Gateway-Cache") != "hit" {
			t.Fatalf("A's repeat: cache %q, want hit", h.Get("X-Gateway-Cache"))
		}
		// B sends A's exact prompt: no hit, billed like any call.
		st, body, h = cached(b.key, secret)
		record(b, st, body)
		if h.Get("X-Gateway-Cache") != "miss" || gjson.GetBytes(body, "delivery.cost_usd").Float() <= 0 {
			t.Fatalf("B with A's prompt: cache %q, cost %v: A's answer crossed orgs", h.Get("X-Gateway-Cache"),
				gjson.GetBytes(body, "delivery.cost_usd").Value())
		}
		// A member the gateway does not know still reaches the upstream:
		// requests that differ in it do not share an entry.
		for _, extra := range []string{`"user":"alice"`, `"user":"bob"`} {
			st, body, h = cached(a.key, chatBody("demo/demo-chat", "tenant A's confidential prompt", extra))
			record(a, st, body)
			if h.Get("X-Gateway-Cache") != "miss" {
				t.Fatalf("A with %s: cache %q, want miss", extra, h.Get("X-Gateway-Cache"))
			}
		}
	})

	t.Run("every endpoint, both orgs", func(t *testing.T) {
		for _, tn := range []*tenant{a, b} {
			for _, c := range []struct{ path, body string }{
				{"/chat/completions", chatBody("demo/demo-chat", "hello from "+tn.name, "")},
				{"/messages", `{"model":"demo-anthropic/demo-claude","max_tokens":50,"messages":[{"role":"user","content":"hi from ` + tn.name + `"}]}`},
				{"/responses", `{"model":"demo/demo-chat","input":"hi from ` + tn.name + `"}`},
				{"/embeddings", `{"model":"demo/demo-embed","input":"hi from ` + tn.name + `"}`},
			} {
				st, body, _ := g.do(http.MethodPost, c.path, tn.key, c.body)
				if c.path == "/embeddings" {
					// An embeddings answer carries no id; the call is
					// still recorded and charged to the org.
					if st != http.StatusOK {
						t.Fatalf("%s: %d %s", c.path, st, body)
					}
					continue
				}
				record(tn, st, body)
			}
			st, body, _ := g.do(http.MethodPost, "/chat/completions", tn.key, chatBody("demo/demo-chat", "stream "+tn.name, `"stream":true`))
			if st != http.StatusOK {
				t.Fatalf("stream: %d %s", st, body)
			}
			tn.calls = append(tn.calls, firstStreamID(body))
		}
	})

	t.Run("batch queue", func(t *testing.T) {
		for _, tn := range []*tenant{a, b} {
			st, body, _ := g.do(http.MethodPost, "/chat/completions", tn.key, chatBody("demo/demo-chat", "later for "+tn.name, `"tier":"batch"`))
			record(tn, st, body)
		}
		for _, tn := range []*tenant{a, b} {
			id := tn.calls[len(tn.calls)-1]
			eventually(t, "batch result", func() error {
				st, body, _ := g.do(http.MethodGet, "/calls/"+id, tn.key, nil)
				if st != http.StatusOK || gjson.GetBytes(body, "status").String() != "succeeded" {
					return errorf("%d %s", st, body)
				}
				if got := gjson.GetBytes(body, "response_payload.choices.0.message.content").String(); got != "Echo: later for "+tn.name {
					t.Fatalf("%s's batch result is %q", tn.name, got)
				}
				return nil
			})
		}
	})

	t.Run("calls, feedback and operations never cross", func(t *testing.T) {
		for _, pair := range [][2]*tenant{{a, b}, {b, a}} {
			me, them := pair[0], pair[1]
			listed := listCallIDs(t, g, me.key)
			for _, id := range them.calls {
				if slices.Contains(listed, id) {
					t.Errorf("%s lists %s's call %s", me.name, them.name, id)
				}
				st, body, _ := g.do(http.MethodGet, "/calls/"+id, me.key, nil)
				if st != http.StatusForbidden {
					t.Errorf("%s reads %s's call %s: %d %.200s", me.name, them.name, id, st, body)
				}
				st, body, _ = g.do(http.MethodPost, "/feedback", me.key, fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, id))
				if st != http.StatusForbidden {
					t.Errorf("%s refunds %s's call %s: %d %.200s", me.name, them.name, id, st, body)
				}
			}
			for _, id := range me.calls {
				if !slices.Contains(listed, id) {
					t.Errorf("%s does not list its own call %s", me.name, id)
				}
			}
		}
		// An operation of A cannot tag B's calls, and B learns nothing of it.
		op := postAs(t, g, a.key, "/operations", `{"name":"a-op","key":"a_op"}`)
		for _, ref := range []string{op.Get("id").String(), "a_op"} {
			st, body, _ := g.do(http.MethodPost, "/chat/completions", b.key,
				chatBody("demo/demo-chat", "x", fmt.Sprintf(`"metadata":{"operation_id":%q}`, ref)))
			if st != http.StatusBadRequest || gjson.GetBytes(body, "error.param").String() != "metadata.operation_id" {
				t.Errorf("B tags a call with A's operation %s: %d %.200s", ref, st, body)
			}
		}
		st, body, _ := g.do(http.MethodGet, "/calls?operation_id="+op.Get("id").String(), b.key, nil)
		if st == http.StatusOK && gjson.GetBytes(body, "data.#").Int() != 0 {
			t.Errorf("B lists calls of A's operation: %.300s", body)
		}
	})

	t.Run("each org pays for its own calls only", func(t *testing.T) {
		st := stopAndOpenStore(t, g)
		for _, tn := range []*tenant{a, b} {
			org, err := st.EnsureOrg(tn.name)
			if err != nil {
				t.Fatal(err)
			}
			page, err := st.LedgerEntries(org.ID, reliability.PageQuery{Limit: reliability.MaxPageLimit})
			if err != nil {
				t.Fatal(err)
			}
			charges := 0
			for _, e := range page.Data {
				if e.Kind != reliability.LedgerCharge {
					continue
				}
				charges++
				if e.CallID == nil || (!slices.Contains(tn.calls, *e.CallID) && !strings.HasPrefix(*e.CallID, "emb_")) {
					t.Errorf("%s charged for a call that is not its own: %+v", tn.name, e)
				}
			}
			if charges == 0 {
				t.Errorf("%s was never charged", tn.name)
			}
		}
	})
}

// listCallIDs reads every page of GET /calls for key.
func listCallIDs(t *testing.T, g *gateway, key string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		path := "/calls?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		st, body, _ := g.do(http.MethodGet, path, key, nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, st, body)
		}
		for _, c := range gjson.GetBytes(body, "data").Array() {
			if org := c.Get("org_id").String(); org == "" {
				t.Fatalf("call without org: %.200s", c.Raw)
			}
			ids = append(ids, c.Get("id").String())
		}
		if !gjson.GetBytes(body, "has_more").Bool() {
			return ids
		}
		cursor = gjson.GetBytes(body, "next_cursor").String()
	}
}

// postAs posts body with key and wants a 2xx answer.
func postAs(t *testing.T, g *gateway, key, path, body string) gjson.Result {
	t.Helper()
	st, b, _ := g.do(http.MethodPost, path, key, body)
	if st/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, st, b)
	}
	return gjson.ParseBytes(b)
}
