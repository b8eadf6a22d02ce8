package integration

import (
	"net/http/httptest"

	"bytes"
	"encoding/json"
	"fmt"
	"github.com/modelgate/gateway/demoupstream"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestReloadUnderTraffic reloads the config while calls are in flight: no
// call fails, the store is shared across configs (no lock fight), and every
// answered call is recorded.
func TestReloadUnderTraffic(t *testing.T) {
	// The upstream is outside the Caddy being reloaded, as real upstreams are.
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{Strict: true}))
	defer up.Close()
	g := startGatewayWith(t, up.URL)
	const workers, perWorker = 4, 40
	var (
		mu   sync.Mutex
		ids  []string
		errs []string
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				stream := i%2 == 1
				body := fmt.Sprintf(`{"model":"demo/demo-chat","stream":%v,"messages":[{"role":"user","content":"worker %d call %d"}]}`, stream, w, i)
				resp, err := postRetryingDials(g.base+"/chat/completions", body)
				if err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
					continue
				}
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case resp.StatusCode != http.StatusOK:
					errs = append(errs, fmt.Sprintf("status %d: %s", resp.StatusCode, raw))
				case stream:
					first := bytes.TrimPrefix(bytes.SplitN(raw, []byte("\n"), 2)[0], []byte("data: "))
					ids = append(ids, gjson.GetBytes(first, "id").String())
				default:
					ids = append(ids, gjson.GetBytes(raw, "id").String())
				}
				mu.Unlock()
			}
		}(w)
	}
	for i := 0; i < 5; i++ {
		g.load(fmt.Sprintf("model demo/reload-%d {\n\t\t\tprice 1 1\n\t\t}", i))
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d calls failed during reloads, first: %s", len(errs), errs[0])
	}
	// The last config must serve the model it added.
	g.post("/chat/completions", chatBody("demo/reload-4", "after reloads", ""), http.StatusOK)

	recorded := map[string]bool{}
	cursor := ""
	for {
		path := "/calls?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		page := g.get(path, http.StatusOK)
		for _, id := range page.Get("data.#.id").Array() {
			recorded[id.String()] = true
		}
		if !page.Get("has_more").Bool() {
			break
		}
		cursor = page.Get("next_cursor").String()
	}
	for _, id := range ids {
		if id == "" || !recorded[id] {
			t.Fatalf("call %q answered but not recorded (%d answered, %d recorded)", id, len(ids), len(recorded))
		}
	}
	// Nothing else was recorded: no retried request had reached a handler.
	if len(recorded) != len(ids)+1 {
		t.Fatalf("%d calls recorded, %d answered (+1 after the reloads)", len(recorded), len(ids))
	}
	if len(ids) != workers*perWorker {
		t.Fatalf("%d answered, want %d", len(ids), workers*perWorker)
	}
}

// TestAdminCreatesKeys creates a key through the admin API and uses it.
func TestAdminCreatesKeys(t *testing.T) {
	g := startGateway(t)
	resp, err := http.Post("http://"+g.admin+"/llm/keys", "application/json", bytes.NewReader([]byte(`{"org":"acme","create_org":true}`)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	var out struct {
		Key   string `json:"key"`
		OrgID string `json:"org_id"`
		Org   string `json:"org"`
		Hint  string `json:"hint"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if !keyPattern.MatchString(out.Key) || out.Org != "acme" {
		t.Fatalf("key answer: %s", raw)
	}
	status, body, _ := g.do(http.MethodPost, "/chat/completions", out.Key, chatBody("demo/demo-chat", "new key", ""))
	if status != http.StatusOK {
		t.Fatalf("new key: %d %s", status, body)
	}
	id := gjson.GetBytes(body, "id").String()
	// The new org owns its call; the demo org may not read it.
	status, body, _ = g.do(http.MethodGet, "/calls/"+id, out.Key, nil)
	if status != http.StatusOK || gjson.GetBytes(body, "org_id").String() != out.OrgID {
		t.Fatalf("own call: %d %s", status, body)
	}
	status, _, _ = g.do(http.MethodGet, "/calls/"+id, demoKey, nil)
	if status != http.StatusForbidden {
		t.Fatalf("demo org reading acme's call: %d", status)
	}
	// A second key for the same org acts for the same org.
	resp, err = http.Post("http://"+g.admin+"/llm/keys", "application/json", bytes.NewReader([]byte(`{"org":"acme"}`)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if gjson.GetBytes(raw, "org_id").String() != out.OrgID || gjson.GetBytes(raw, "key").String() == out.Key {
		t.Fatalf("second key: %s", raw)
	}
	resp, err = http.Post("http://"+g.admin+"/llm/keys", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no org: %d", resp.StatusCode)
	}
}

var keyPattern = regexp.MustCompile(`^mg_live_[A-Za-z0-9]{32}$`)

// freshConns opens a connection per request: a reused keep-alive
// connection can be closed as idle by the old config's server just as the
// client sends on it, a race of HTTP keep-alive rather than of the gateway.
var freshConns = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// postRetryingDials sends a chat call, retrying when no response came back.
// On Linux, Caddy binds each config's listener with SO_REUSEPORT and closes
// the old socket on reload; the kernel resets connections still queued on
// it, before any handler runs. SDKs retry such failures. The test proves
// they never reached the gateway: the store holds exactly the answered calls.
func postRetryingDials(url, body string) (*http.Response, error) {
	var err error
	for try := 0; try < 5; try++ {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+demoKey)
		var resp *http.Response
		resp, err = freshConns.Do(req)
		if err == nil {
			return resp, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, err
}
