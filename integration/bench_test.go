package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkChatCall measures one plain chat call through the in-process
// gateway and demo upstream; profile it with -cpuprofile to see the
// gateway's own share of a call.
func BenchmarkChatCall(b *testing.B) {
	t := &testing.T{}
	g := startGateway(t)
	body := chatBody("demo/demo-chat", "benchmark this call please", "")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+demoKey)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

// BenchmarkChatStream measures one streamed chat call of 50 chunks.
func BenchmarkChatStream(b *testing.B) {
	t := &testing.T{}
	g := startGateway(t)
	body := `{"model":"demo/demo-chat","stream":true,"messages":[{"role":"user","content":"bench [[words:50]]"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+demoKey)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
