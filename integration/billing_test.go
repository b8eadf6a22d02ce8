package integration

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/reliability"
)

const smallKey = "mg_live_small000000000000000000000"

// TestNoOverdraftUnderConcurrency: 32 concurrent calls whose worst case is
// about 4 USD each, on an org with the 5 USD starting credit. Each call
// reserves its worst case before going upstream, so only what the credit
// covers is served, and the balance never goes below zero.
func TestNoOverdraftUnderConcurrency(t *testing.T) {
	g := startGatewayOpts(t, gatewayOpts{llm: `
		org small {
			key ` + smallKey + `
		}
		model demo/costly {
			price 20000 20000
			path demo demo-chat
		}`})
	// About 100 bytes of body (50 tokens reserved) and 150 output tokens
	// at 0.02 USD a token: 4 USD reserved, about 0.5 USD charged.
	body := chatBody("demo/costly", "spend", `"max_tokens":150`)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		served []string
		codes  = map[int]int{}
	)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, b, _ := g.do(http.MethodPost, "/chat/completions", smallKey, body)
			mu.Lock()
			defer mu.Unlock()
			codes[status]++
			switch status {
			case http.StatusOK:
				served = append(served, gjson.GetBytes(b, "id").String())
			case http.StatusTooManyRequests:
				if c := gjson.GetBytes(b, "error.code").String(); c != "insufficient_quota" {
					t.Errorf("429 with code %q: %s", c, b)
				}
			default:
				t.Errorf("unexpected answer %d: %s", status, b)
			}
		}()
	}
	wg.Wait()
	if len(served) == 0 || codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("answers %v: want some served and some refused", codes)
	}
	// Calls keep being served while the charges leave room for a worst case.
	for i := 0; ; i++ {
		status, b, _ := g.do(http.MethodPost, "/chat/completions", smallKey, body)
		if status != http.StatusOK {
			break
		}
		served = append(served, gjson.GetBytes(b, "id").String())
		if i > 20 {
			t.Fatal("calls never ran out of credit")
		}
	}
	st := stopAndOpenStore(t, g)
	org, err := st.EnsureOrg("small")
	if err != nil {
		t.Fatal(err)
	}
	bal, err := st.Balance(org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if bal < 0 {
		t.Fatalf("balance %v USD after %d served calls: below the floor", bal, len(served))
	}
	var sum float64
	q := reliability.PageQuery{Limit: reliability.MaxPageLimit}
	charges := 0
	for {
		page, err := st.LedgerEntries(org.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			sum += e.AmountUSD
			if e.Kind == reliability.LedgerCharge {
				charges++
			}
		}
		if !page.HasMore {
			break
		}
		q.Cursor = *page.NextCursor
	}
	if d := sum - bal; d > 1e-9 || d < -1e-9 {
		t.Fatalf("balance %v != sum of entries %v", bal, sum)
	}
	if charges != len(served) {
		t.Fatalf("%d charges for %d served calls", charges, len(served))
	}
}

// stopAndOpenStore stops Caddy (which flushes every call) and opens the
// gateway's store file, closed when the test ends.
func stopAndOpenStore(t *testing.T, g *gateway) *reliability.BoltStore {
	t.Helper()
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := reliability.OpenBolt(g.store, reliability.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// firstStreamID is the call id the first event of an SSE body carries.
func firstStreamID(body []byte) string {
	for line := range strings.SplitSeq(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if id := streamID(data); id != "" {
				return id
			}
		}
	}
	return ""
}

// streamRequests are one streamed request per client dialect, on an
// OpenAI-dialect and an Anthropic-dialect upstream.
func streamRequests(text string) []struct{ name, path, body string } {
	var out []struct{ name, path, body string }
	for _, model := range []string{"demo/demo-chat", "demo-anthropic/demo-claude"} {
		out = append(out,
			struct{ name, path, body string }{"chat " + model, "/chat/completions",
				fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":%q}]}`, model, text)},
			struct{ name, path, body string }{"messages " + model, "/messages",
				fmt.Sprintf(`{"model":%q,"stream":true,"max_tokens":100000,"messages":[{"role":"user","content":%q}]}`, model, text)},
			struct{ name, path, body string }{"responses " + model, "/responses",
				fmt.Sprintf(`{"model":%q,"stream":true,"input":%q}`, model, text)},
		)
	}
	return out
}

// streamID is the call id a stream's first event carries, in any dialect.
func streamID(data string) string {
	for _, p := range []string{"id", "message.id", "response.id"} {
		if id := gjson.Get(data, p).String(); id != "" {
			return id
		}
	}
	return ""
}

// TestAbortedStreamsAreBilled: a client that reads the start of a long
// stream and hangs up is charged for what was relayed (estimated and marked
// so on the call), and so is a stream the upstream cuts; in every dialect.
func TestAbortedStreamsAreBilled(t *testing.T) {
	g := startGateway(t)
	for _, tc := range streamRequests("tell me everything [[words:40000]]") {
		t.Run("client leaves/"+tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, g.base+tc.path, strings.NewReader(tc.body))
			r.Header.Set("Authorization", "Bearer "+demoKey)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			id, events := "", 0
			for sc.Scan() && events < 20 {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					events++
					if id == "" {
						id = streamID(data)
					}
				}
			}
			resp.Body.Close() // hang up mid-stream
			if id == "" {
				t.Fatal("no id in the first events")
			}
			var rec gjson.Result
			eventually(t, "the aborted call's record", func() error {
				status, b, _ := g.do(http.MethodGet, "/calls/"+id, demoKey, nil)
				if status != http.StatusOK {
					return errorf("GET /calls/%s: %d %s", id, status, b)
				}
				rec = gjson.ParseBytes(b)
				return nil
			})
			if rec.Get("status").String() != "failed" || !rec.Get("usage_estimated").Bool() {
				t.Fatalf("record: want failed and usage_estimated: %.400s", rec.Raw)
			}
			out := rec.Get("completion_tokens").Int()
			if out <= 0 || out >= 40000 || rec.Get("prompt_tokens").Int() <= 0 {
				t.Fatalf("tokens %d in %d out: want what was relayed, not nothing and not all", rec.Get("prompt_tokens").Int(), out)
			}
			if rec.Get("cost_usd").Float() <= 0 {
				t.Fatalf("aborted stream billed %v: %.300s", rec.Get("cost_usd").Value(), rec.Raw)
			}
		})
	}
	for _, tc := range streamRequests("tell me a story [[cut:5]]") {
		t.Run("upstream cuts/"+tc.name, func(t *testing.T) {
			status, b, _ := g.do(http.MethodPost, tc.path, demoKey, tc.body)
			if status != http.StatusOK {
				t.Fatalf("%d %s", status, b)
			}
			id := firstStreamID(b)
			rec := g.get("/calls/"+id, http.StatusOK)
			if rec.Get("status").String() != "failed" || rec.Get("completion_tokens").Int() <= 0 || rec.Get("cost_usd").Float() <= 0 {
				t.Fatalf("cut stream record: want failed and billed for what was relayed: %.400s", rec.Raw)
			}
		})
	}
}
