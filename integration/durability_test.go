package integration

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/demoupstream"
	"github.com/modelgate/gateway/reliability"
)

// TestGracefulStopFlushes stops Caddy right after a burst of calls and
// reopens the store file: every answered call was committed.
func TestGracefulStopFlushes(t *testing.T) {
	g := startGateway(t)
	var ids []string
	for i := 0; i < 50; i++ {
		ids = append(ids, g.post("/chat/completions", chatBody("demo/demo-chat", "flush me", ""), http.StatusOK).Get("id").String())
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := reliability.OpenBolt(g.store, reliability.BoltOptions{})
	if err != nil {
		t.Fatalf("reopening the store after a stop: %v", err)
	}
	defer st.Close()
	for _, id := range ids {
		if _, err := st.Call(id); err != nil {
			t.Fatalf("call %s lost in the stop: %v", id, err)
		}
	}
}

// TestUpstreamCompression: the gateway never forwards the client's
// Accept-Encoding. Go's transport asks for gzip itself where the provider's
// compression is on, and decodes it, so the body can be rewritten; a
// provider on a loopback address is not asked to compress by default.
func TestUpstreamCompression(t *testing.T) {
	demo := demoupstream.New(demoupstream.Config{Strict: true})
	type seen struct{ asked, sent string }
	var (
		mu     sync.Mutex
		byPath = map[string]seen{}
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		demo.ServeHTTP(w, r)
		mu.Lock()
		byPath[r.URL.Path] = seen{asked: r.Header.Get("Accept-Encoding"), sent: w.Header().Get("Content-Encoding")}
		mu.Unlock()
	}))
	defer up.Close()
	g := startGatewayOpts(t, gatewayOpts{llm: `
		provider zipped {
			dialect openai
			base_url ` + up.URL + `/zipped/v1
			compression on
		}
		provider local {
			dialect openai
			base_url ` + up.URL + `/local/v1
		}
		model zipped/demo-chat {
			price 0.5 1.5
		}
		model local/demo-chat {
			price 0.5 1.5
		}`})
	for _, tc := range []struct {
		provider, asked, sent string
	}{
		{"zipped", "gzip", "gzip"},
		{"local", "", ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(chatBody(tc.provider+"/demo-chat", "zip it", "")))
		req.Header.Set("Authorization", "Bearer "+demoKey)
		// Set by hand, so Go's client does not decode for us: we see the
		// wire. The upstream must not see it.
		req.Header.Set("Accept-Encoding", "br, gzip")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: the gateway answered with Content-Encoding %q", tc.provider, resp.Header.Get("Content-Encoding"))
		}
		if resp.StatusCode != http.StatusOK || gjson.GetBytes(raw, "choices.0.message.content").String() != "Echo: zip it" ||
			!gjson.GetBytes(raw, "delivery").Exists() {
			t.Fatalf("%s: %d %s", tc.provider, resp.StatusCode, raw)
		}
		mu.Lock()
		got := byPath["/"+tc.provider+"/v1/chat/completions"]
		mu.Unlock()
		if got.asked != tc.asked || got.sent != tc.sent {
			t.Fatalf("%s: upstream was asked for %q and sent %q, want %q and %q", tc.provider, got.asked, got.sent, tc.asked, tc.sent)
		}
	}
}

// TestCutStreamsEndWithTheShapesErrorEvent: an upstream that breaks after
// the first byte reached the client ends each shape's stream with that
// shape's own error event, and the call is recorded as failed.
func TestCutStreamsEndWithTheShapesErrorEvent(t *testing.T) {
	g := startGateway(t)
	cases := []struct {
		path, body, wantEvent string
	}{
		{"/messages", `{"model":"demo/demo-chat","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[words:20]] [[cut:4]]"}]}`, "error"},
		{"/messages", `{"model":"demo-anthropic/demo-claude","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[words:20]] [[cut:4]]"}]}`, "error"},
		{"/responses", `{"model":"demo/demo-chat","stream":true,"input":"[[words:20]] [[cut:4]]"}`, "response.failed"},
		{"/chat/completions", `{"model":"demo-anthropic/demo-claude","stream":true,"messages":[{"role":"user","content":"[[words:20]] [[cut:4]]"}]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.path+" "+gjson.Get(tc.body, "model").String(), func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, g.base+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+demoKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var lastEvent, lastData string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line := sc.Text()
				if ev, ok := strings.CutPrefix(line, "event: "); ok {
					lastEvent = ev
				}
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					if data != "[DONE]" && !gjson.Valid(data) {
						t.Fatalf("invalid data %q", data)
					}
					lastData = data
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("stream did not end cleanly: %v", err)
			}
			if lastEvent != tc.wantEvent || !strings.Contains(lastData, "error") {
				t.Fatalf("last event %q data %s", lastEvent, lastData)
			}
			rec := g.get("/calls?limit=1", http.StatusOK).Get("data.0")
			if rec.Get("status").String() != "failed" {
				t.Fatalf("record: %.400s", rec.Raw)
			}
		})
	}
}

// TestUpstreamInvalidJSON: a 200 whose body is not JSON is a 502
// upstream_invalid_response in the client's shape, never a half-rewritten
// body, and the call is recorded as failed; for every way the answer is
// read (a native chat answer, one converted across dialects, one passed
// on in its own shape).
func TestUpstreamInvalidJSON(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"broken","model":"m","choices":[{"message":{"content":"cut`)
	}))
	defer up.Close()
	g := startGatewayOpts(t, gatewayOpts{llm: `
		provider brokenchat {
			dialect openai
			base_url ` + up.URL + `/v1
		}
		provider brokenclaude {
			dialect anthropic
			base_url ` + up.URL + `/v1
		}
		model brokenchat/m {
			price 1 1
		}
		model brokenclaude/m {
			price 1 1
		}`})
	for _, tc := range []struct{ path, body string }{
		{"/chat/completions", chatBody("brokenchat/m", "hi", "")},
		{"/chat/completions", chatBody("brokenclaude/m", "hi", "")},
		{"/messages", `{"model":"brokenclaude/m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`},
		{"/responses", `{"model":"brokenchat/m","input":"hi"}`},
	} {
		status, out, _ := g.do(http.MethodPost, tc.path, demoKey, tc.body)
		if status != http.StatusBadGateway || !gjson.ValidBytes(out) || !strings.Contains(string(out), "upstream_invalid_response") {
			t.Fatalf("%s %s: %d %s", tc.path, gjson.Get(tc.body, "model"), status, out)
		}
		rec := g.get("/calls?limit=1", http.StatusOK).Get("data.0")
		if rec.Get("status").String() != "failed" || rec.Get("model").String() != gjson.Get(tc.body, "model").String() {
			t.Fatalf("%s: record %.300s", tc.path, rec.Raw)
		}
	}
}
