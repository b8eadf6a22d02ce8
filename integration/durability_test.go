package integration

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"

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

// TestUpstreamGzipDecoded: the upstream compresses whenever it may; the
// gateway never forwards the client's Accept-Encoding, so Go's transport
// negotiates and decodes, and the body can be rewritten.
func TestUpstreamGzipDecoded(t *testing.T) {
	g := startGateway(t)
	req, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(chatBody("demo/demo-chat", "zip it", "")))
	req.Header.Set("Authorization", "Bearer "+demoKey)
	// Set by hand, so Go's client does not decode for us: we see the wire.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || gjson.GetBytes(raw, "choices.0.message.content").String() != "Echo: zip it" ||
		!gjson.GetBytes(raw, "delivery").Exists() {
		t.Fatalf("%d %s", resp.StatusCode, raw)
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
		{"/responses", `{"model":"demo/demo-chat","stream":true,"input":"[[words:20]] [[cut:4]]"}`, "error"},
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
