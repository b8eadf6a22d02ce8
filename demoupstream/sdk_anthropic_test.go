package demoupstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// The official Anthropic SDK checks the Messages dialect: plain messages,
// streams folded with Accumulate, tool use and errors.

func anthropicClient(t *testing.T, opts ...option.RequestOption) anthropic.Client {
	t.Helper()
	srv := serve(t, Config{APIKey: sdkKey, Strict: true})
	return anthropic.NewClient(append([]option.RequestOption{
		option.WithBaseURL(srv.URL + "/anthropic/"),
		option.WithAPIKey(sdkKey),
		option.WithMaxRetries(0),
	}, opts...)...)
}

var cityTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
	Name: "get_weather",
	InputSchema: anthropic.ToolInputSchemaParam{
		// Raw JSON keeps the property order the arguments follow.
		Properties: json.RawMessage(`{"city":{"type":"string"},"days":{"type":"integer"}}`),
		Required:   []string{"city", "days"},
	},
}}

func TestAnthropicSDKMessage(t *testing.T) {
	client := anthropicClient(t)
	got, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 64,
		System:    []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello Claude"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.ID, "msg_01") || got.Model != "demo-chat" || got.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("message %s", got.RawJSON())
	}
	if len(got.Content) != 1 || got.Content[0].Type != "text" || got.Content[0].Text != "Echo: Hello Claude" {
		t.Errorf("content %s", got.RawJSON())
	}
	if got.Usage.InputTokens != 4 || got.Usage.OutputTokens != 3 {
		t.Errorf("usage %+v", got.Usage)
	}
}

func TestAnthropicSDKStream(t *testing.T) {
	client := anthropicClient(t)
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("stream [[words:5]]"))},
	})
	var msg anthropic.Message
	var deltas strings.Builder
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "content_block_delta" {
			deltas.WriteString(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "w1 w2 w3 w4 w5" || deltas.String() != msg.Content[0].Text {
		t.Errorf("accumulated %s", msg.RawJSON())
	}
	if msg.StopReason != anthropic.StopReasonEndTurn || msg.Usage.InputTokens != 2 || msg.Usage.OutputTokens != 5 {
		t.Errorf("stop %q usage %+v", msg.StopReason, msg.Usage)
	}
}

func TestAnthropicSDKToolUse(t *testing.T) {
	client := anthropicClient(t)
	params := anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Nice"))},
		Tools:     []anthropic.ToolUnionParam{cityTool},
	}
	wantInput := `{"city":"Nice","days":42}`
	wantID := "toolu_" + callDigest("get_weather", wantInput)

	got, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != anthropic.StopReasonToolUse || len(got.Content) != 1 || got.Content[0].Type != "tool_use" ||
		got.Content[0].ID != wantID || got.Content[0].Name != "get_weather" || string(got.Content[0].Input) != wantInput {
		t.Fatalf("tool use %s", got.RawJSON())
	}

	stream := client.Messages.NewStreaming(context.Background(), params)
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].ID != wantID || string(msg.Content[0].Input) != wantInput || msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("streamed tool use %s", msg.RawJSON())
	}

	params.Messages = append(params.Messages, got.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(wantID, "22 C", false)))
	got, err = client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got.Content[0].Text != "Tool result: 22 C" {
		t.Errorf("after tool result %s", got.RawJSON())
	}
}

func TestAnthropicSDKErrors(t *testing.T) {
	client := anthropicClient(t)
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("[[status:529]]"))},
	})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.Error(), "overloaded_error") {
		t.Errorf("overloaded error %v", err)
	}

	wrongKey := anthropicClient(t, option.WithAPIKey("nope"))
	_, err = wrongKey.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || !strings.Contains(apiErr.Error(), "authentication_error") {
		t.Errorf("auth error %v", err)
	}
}
