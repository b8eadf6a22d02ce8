package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/demoupstream"
)

// reloadCaddyfile is the gateway the reload test runs as a process: one
// org, the demo upstream (outside the process, as real upstreams are), and
// drain, when set, as the llm block's reload_drain.
func reloadCaddyfile(dir string, port, adminPort int, upstream, drain string) string {
	extra := ""
	if drain != "" {
		extra = "reload_drain " + drain
	}
	return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	persist_config off
	log {
		level WARN
	}
	llm {
		store %s
		%s
		org demo {
			key %s
		}
		provider demo {
			dialect openai
			base_url %s/v1
		}
		model demo/demo-chat {
			price 0.5 1.5
		}
	}
}

http://127.0.0.1:%d {
	route /v1/* {
		llm_gateway
		llm_reliability
	}
}
`, adminPort, filepath.Join(dir, "gw.db"), extra, demoKey, upstream, port)
}

// reloadRun is what the load of one reload run saw.
type reloadRun struct {
	answered []string // ids of the calls answered 200
	failures []string // transport errors and other statuses
	requests int
}

// runReloadsUnderLoad starts the gateway binary, keeps workers calling it
// over keep-alive connections (plain and streamed calls, no retries), and
// runs `caddy reload --force` reloads times, each once calls have gone
// through since the previous one.
func runReloadsUnderLoad(t *testing.T, drain string, reloads, workers int) reloadRun {
	t.Helper()
	bin := caddyBinary(t)
	up := httptest.NewServer(demoupstream.New(demoupstream.Config{Strict: true}))
	defer up.Close()
	dir := t.TempDir()
	port, adminPort := freePort(t), freePort(t)
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(reloadCaddyfile(dir, port, adminPort, up.URL, drain)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := childEnv(dir)
	p := startProcess(t, dir, env, bin, "run", "--config", cfg, "--adapter", "caddyfile")
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	waitStatus(t, p, http.DefaultClient, base+"/models", http.StatusUnauthorized)

	// One pool of keep-alive connections, as an SDK client has.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var (
		mu       sync.Mutex
		run      reloadRun
		done     atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		maxCalls = 200000 // bounds the loop whatever happens
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < maxCalls; i++ {
				select {
				case <-stop:
					return
				default:
				}
				stream := (w+i)%2 == 1
				body := fmt.Sprintf(`{"model":"demo/demo-chat","stream":%v,"messages":[{"role":"user","content":"w%d c%d"}]}`, stream, w, i)
				req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", bytes.NewReader([]byte(body)))
				req.Header.Set("Authorization", "Bearer "+demoKey)
				resp, err := client.Do(req)
				var raw []byte
				if err == nil {
					raw, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				mu.Lock()
				run.requests++
				switch {
				case err != nil:
					run.failures = append(run.failures, err.Error())
				case resp.StatusCode != http.StatusOK:
					run.failures = append(run.failures, fmt.Sprintf("status %d: %.200s", resp.StatusCode, raw))
				case stream && !bytes.Contains(raw, []byte("data: [DONE]")):
					run.failures = append(run.failures, fmt.Sprintf("stream without its end: %.200s", raw))
				case stream:
					first := bytes.TrimPrefix(bytes.SplitN(raw, []byte("\n"), 2)[0], []byte("data: "))
					run.answered = append(run.answered, gjson.GetBytes(first, "id").String())
				default:
					run.answered = append(run.answered, gjson.GetBytes(raw, "id").String())
				}
				mu.Unlock()
				done.Add(1)
			}
		}(w)
	}
	admin := fmt.Sprintf("127.0.0.1:%d", adminPort)
	for i := 0; i < reloads; i++ {
		// Wait for calls to flow before each reload, so that every
		// reload happens under load.
		from, deadline := done.Load(), time.Now().Add(30*time.Second)
		for done.Load() < from+int64(4*workers) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		runCommand(t, dir, env, bin, "reload", "--config", cfg, "--adapter", "caddyfile", "--address", admin, "--force")
	}
	close(stop)
	wg.Wait()
	if p.exited() {
		t.Fatalf("the gateway exited: %v\n%s", p.err, p.out.String())
	}

	// Every answered call is on record, read back through the API.
	recorded := map[string]bool{}
	cursor := ""
	for pages := 0; pages < 10000; pages++ {
		url := base + "/calls?limit=200"
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		page := getJSON(t, url)
		for _, id := range page.Get("data.#.id").Array() {
			recorded[id.String()] = true
		}
		if !page.Get("has_more").Bool() {
			break
		}
		cursor = page.Get("next_cursor").String()
	}
	for _, id := range run.answered {
		if id == "" || !recorded[id] {
			t.Fatalf("call %q answered but not recorded (%d answered, %d recorded)", id, len(run.answered), len(recorded))
		}
	}
	return run
}

// TestReloadsUnderLoadLoseNothing runs 20 real reloads (`caddy reload
// --force` against the running binary) while keep-alive clients call the
// gateway without retrying: no request fails, and every answered call is
// recorded. With reload_drain off, the same run shows what the drain
// saves (see README "Reloads"); set GATEWAY_RELOAD_COMPARE=1 to log it.
func TestReloadsUnderLoadLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	run := runReloadsUnderLoad(t, "", 20, 8)
	t.Logf("20 reloads: %d requests, %d answered, %d failed", run.requests, len(run.answered), len(run.failures))
	if len(run.failures) > 0 {
		t.Fatalf("%d of %d requests failed across 20 reloads; first: %s", len(run.failures), run.requests, run.failures[0])
	}
	if os.Getenv("GATEWAY_RELOAD_COMPARE") != "" {
		off := runReloadsUnderLoad(t, "off", 20, 8)
		t.Logf("reload_drain off, 20 reloads: %d requests, %d failed", off.requests, len(off.failures))
		for i, f := range off.failures {
			if i < 5 {
				t.Logf("  %s", f)
			}
		}
	}
}
