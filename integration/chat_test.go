package integration

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"
)

func openaiClient(g *gateway, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(g.base+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// assertDelivery checks a complete delivery block of a call served by the
// demo upstream at the given price per 1M tokens.
func assertDelivery(t *testing.T, d gjson.Result, provider string, inPrice, outPrice float64, in, out int64) {
	t.Helper()
	if !d.IsObject() {
		t.Fatalf("no delivery block")
	}
	for _, f := range []string{"tier", "served_by", "provider", "quantization", "upgraded", "cost_usd", "latency_ms", "evals.gates", "evals.scheduled",
		"fingerprints.prompt", "fingerprints.exchange", "fingerprints.schema", "fingerprints.cache"} {
		if !d.Get(f).Exists() {
			t.Errorf("delivery.%s missing: %s", f, d.Raw)
		}
	}
	if d.Get("tier").String() != "standard" || d.Get("served_by").String() != "provider" || d.Get("provider").String() != provider ||
		d.Get("quantization").String() != "full" || d.Get("upgraded").Bool() {
		t.Errorf("delivery routing fields: %s", d.Raw)
	}
	if d.Get("eta_ms").Exists() {
		t.Errorf("eta_ms on a standard-tier response: %s", d.Raw)
	}
	want := (float64(in)*inPrice + float64(out)*outPrice) / 1e6
	if got := d.Get("cost_usd").Float(); got < want*0.999999 || got > want*1.000001 {
		t.Errorf("cost_usd %v, want %v (%d in, %d out)", got, want, in, out)
	}
	if d.Get("latency_ms").Int() < 0 || d.Get("evals.gates").Int() != 0 || d.Get("evals.scheduled").Bool() {
		t.Errorf("latency/evals: %s", d.Raw)
	}
	if !strings.HasPrefix(d.Get("fingerprints.prompt").String(), "fp_p_") || !strings.HasPrefix(d.Get("fingerprints.cache").String(), "fp_c_") ||
		!strings.HasPrefix(d.Get("fingerprints.exchange").String(), "fp_e_") || d.Get("fingerprints.schema").Type != gjson.Null {
		t.Errorf("fingerprints: %s", d.Get("fingerprints").Raw)
	}
}

func TestChatWithOpenAISDK(t *testing.T) {
	g := startGateway(t)
	client := openaiClient(g, demoKey)
	ctx := context.Background()

	t.Run("plain", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "demo/demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("be brief"),
				openai.UserMessage("hello there"),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Choices[0].Message.Content; got != "Echo: hello there" {
			t.Fatalf("content %q", got)
		}
		if c.Model != "demo/demo-chat" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Choices[0].FinishReason != "stop" {
			t.Fatalf("model %q id %q finish %q", c.Model, c.ID, c.Choices[0].FinishReason)
		}
		// The demo counts words: "be brief" + "hello there" = 4 in, "Echo: hello there" = 3 out.
		if c.Usage.PromptTokens != 4 || c.Usage.CompletionTokens != 3 || c.Usage.TotalTokens != 7 {
			t.Fatalf("usage %+v", c.Usage)
		}
		assertDelivery(t, gjson.Get(c.RawJSON(), "delivery"), "demo", 0.5, 1.5, 4, 3)

		rec := g.get("/calls/"+c.ID, http.StatusOK)
		if rec.Get("object").String() != "call" || rec.Get("model").String() != "demo/demo-chat" || rec.Get("prompt_tokens").Int() != 4 ||
			rec.Get("completion_tokens").Int() != 3 || rec.Get("status").String() != "succeeded" || rec.Get("operation_id").Type != gjson.Null {
			t.Fatalf("call record: %s", rec.Raw)
		}
		if rec.Get("request_payload.messages.1.content").String() != "hello there" ||
			rec.Get("response_payload.choices.0.message.content").String() != "Echo: hello there" {
			t.Fatalf("payloads: %s", rec.Raw)
		}
		if strings.Contains(rec.Raw, demoKey) {
			t.Fatal("the API key was recorded")
		}
	})

	t.Run("streamed", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         "demo/demo-chat",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream [[words:50]]")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		acc := openai.ChatCompletionAccumulator{}
		var ids = map[string]bool{}
		chunks := 0
		var last string
		for stream.Next() {
			ch := stream.Current()
			acc.AddChunk(ch)
			ids[ch.ID] = true
			chunks++
			last = ch.RawJSON()
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		words := make([]string, 50)
		for i := range words {
			words[i] = "w" + strconv.Itoa(i+1)
		}
		if got := acc.Choices[0].Message.Content; got != strings.Join(words, " ") {
			t.Fatalf("content %q", got)
		}
		if len(ids) != 1 || chunks < 50 {
			t.Fatalf("ids %v chunks %d", ids, chunks)
		}
		if acc.Usage.CompletionTokens != 50 || acc.Usage.PromptTokens != 2 {
			t.Fatalf("usage %+v", acc.Usage)
		}
		// The delivery block rides on the last chunk.
		assertDelivery(t, gjson.Get(last, "delivery"), "demo", 0.5, 1.5, 2, 50)
		var id string
		for k := range ids {
			id = k
		}
		rec := g.get("/calls/"+id, http.StatusOK)
		if !rec.Get("stream").Bool() || rec.Get("completion_tokens").Int() != 50 ||
			rec.Get("response_payload.choices.0.message.content").String() != strings.Join(words, " ") {
			t.Fatalf("stream record: %s", rec.Raw)
		}
	})

	t.Run("streamed without usage", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    "demo/demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("quiet please")},
		})
		var last string
		for stream.Next() {
			ch := stream.Current()
			if ch.JSON.Usage.Valid() && ch.Usage.TotalTokens > 0 {
				t.Fatalf("usage sent to a client that did not ask: %s", ch.RawJSON())
			}
			last = ch.RawJSON()
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if gjson.Get(last, "choices.0.finish_reason").String() != "stop" {
			t.Fatalf("last chunk has no finish_reason: %s", last)
		}
		// Billing still knows the usage the client did not ask to see.
		assertDelivery(t, gjson.Get(last, "delivery"), "demo", 0.5, 1.5, 2, 3)
	})
}
