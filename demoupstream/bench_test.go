package demoupstream

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The server is the upstream in the gateway's load benchmarks; these keep
// its own cost per request visible.

func benchmarkCall(b *testing.B, path, body string, headers ...string) {
	h := New(Config{})
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		for _, hd := range headers {
			name, value, _ := strings.Cut(hd, ":")
			req.Header.Set(name, strings.TrimSpace(value))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkChatCompletion(b *testing.B) {
	benchmarkCall(b, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there [[words:50]]"}]}`)
}

func BenchmarkChatCompletionGzip(b *testing.B) {
	benchmarkCall(b, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"Hello there [[words:50]]"}]}`, "Accept-Encoding: gzip")
}

func BenchmarkChatStream(b *testing.B) {
	benchmarkCall(b, "/v1/chat/completions", `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there [[words:50]]"}]}`)
}

func BenchmarkResponsesStream(b *testing.B) {
	benchmarkCall(b, "/v1/responses", `{"model":"demo-chat","stream":true,"input":"Hello there [[words:50]]"}`)
}

func BenchmarkMessagesStream(b *testing.B) {
	benchmarkCall(b, "/v1/messages", `{"model":"demo-chat","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Hello there [[words:50]]"}]}`, anthropicHeaders...)
}

func BenchmarkEmbeddings(b *testing.B) {
	benchmarkCall(b, "/v1/embeddings", `{"model":"demo-embed","input":["one text","another text"],"dimensions":256}`)
}
