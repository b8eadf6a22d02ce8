package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchCalls sends body to the in-process gateway from parallel clients;
// profile it with -cpuprofile to see the gateway's own share of a call.
func benchCalls(b *testing.B, body string) {
	g := startGateway(&testing.T{})
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

// BenchmarkChatCall measures one plain chat call through the in-process
// gateway and demo upstream.
func BenchmarkChatCall(b *testing.B) {
	benchCalls(b, chatBody("demo/demo-chat", "benchmark this call please", ""))
}

// BenchmarkChatStream measures one streamed chat call of 50 chunks.
func BenchmarkChatStream(b *testing.B) {
	benchCalls(b, `{"model":"demo/demo-chat","stream":true,"messages":[{"role":"user","content":"bench [[words:50]]"}]}`)
}
