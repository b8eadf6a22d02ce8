package integration

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
)

func TestFallback(t *testing.T) {
	g := startGateway(t)

	t.Run("refused, 5xx and timeout before the first byte", func(t *testing.T) {
		// Paths: down (connection refused), broken (503), slow (header timeout), demo.
		r := g.post("/chat/completions", chatBody("demo/fallback-chat", "fall through", ""), http.StatusOK)
		if r.Get("choices.0.message.content").String() != "Echo: fall through" || r.Get("delivery.provider").String() != "demo" {
			t.Fatalf("fallback answer: %s", r.Raw)
		}
		rec := g.get("/calls/"+r.Get("id").String(), http.StatusOK)
		atts := rec.Get("attempts").Array()
		if len(atts) != 4 {
			t.Fatalf("attempts: %s", rec.Get("attempts").Raw)
		}
		want := []string{"down", "broken", "slow", "demo"}
		for i, a := range atts {
			if a.Get("provider").String() != want[i] {
				t.Fatalf("attempt %d: %s", i, a.Raw)
			}
			if i < 3 && a.Get("error").String() == "" {
				t.Fatalf("failed attempt %d has no error: %s", i, a.Raw)
			}
		}
		if atts[1].Get("status").Int() != 503 {
			t.Fatalf("503 attempt: %s", atts[1].Raw)
		}
	})

	t.Run("streamed fallback", func(t *testing.T) {
		client := openaiClient(g, demoKey)
		stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model:    "demo/fallback-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream through")},
		})
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != "Echo: stream through" {
			t.Fatalf("content %q", acc.Choices[0].Message.Content)
		}
	})

	t.Run("every path fails", func(t *testing.T) {
		status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/only-broken", "x", ""))
		// The only path answers 503: the client is told so, to retry later.
		if status != http.StatusServiceUnavailable {
			t.Fatalf("status %d: %s", status, body)
		}
		assertSpecError(t, body, "api_error", "-")
		list := g.get("/calls?limit=1", http.StatusOK)
		if list.Get("data.0.status").String() != "failed" || list.Get("data.0.model").String() != "demo/only-broken" {
			t.Fatalf("failed call record: %s", list.Get("data.0").Raw)
		}
	})

	t.Run("upstream error status kept", func(t *testing.T) {
		status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/demo-chat", "x [[status:429]]", ""))
		// Only one path: a 429 that no other path could absorb is passed on as a rate limit.
		if status != http.StatusTooManyRequests {
			t.Fatalf("status %d: %s", status, body)
		}
		assertSpecError(t, body, "rate_limit_error", "-")
	})

	t.Run("cut mid-stream", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, g.base+"/chat/completions",
			strings.NewReader(`{"model":"demo/fallback-chat","stream":true,"messages":[{"role":"user","content":"[[words:20]] [[cut:5]]"}]}`))
		req.Header.Set("Authorization", "Bearer "+demoKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var events []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events = append(events, data)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("the client stream did not end cleanly: %v", err)
		}
		if len(events) < 2 {
			t.Fatalf("events: %q", events)
		}
		last := events[len(events)-1]
		if !gjson.Get(last, "error.message").Exists() || last == "[DONE]" {
			t.Fatalf("stream did not end with an error event: %q", events)
		}
		for _, e := range events[:len(events)-1] {
			if !gjson.Valid(e) {
				t.Fatalf("invalid event %q", e)
			}
		}
		time.Sleep(10 * time.Millisecond)
		list := g.get("/calls?limit=1", http.StatusOK)
		if list.Get("data.0.status").String() != "failed" || !strings.Contains(list.Get("data.0.error").String(), "broke") {
			t.Fatalf("cut stream record: %s", list.Get("data.0").Raw)
		}
	})

	t.Run("access log placeholders", func(t *testing.T) {
		g.post("/chat/completions", chatBody("demo/demo-chat", "log me", ""), http.StatusOK)
		deadline := time.Now().Add(3 * time.Second)
		for {
			raw, _ := os.ReadFile(g.vars["{{ACCESSLOG}}"])
			if strings.Contains(string(raw), `"llm_provider":"demo"`) && strings.Contains(string(raw), `"llm_cost":`) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("access log has no llm fields:\n%s", raw)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
