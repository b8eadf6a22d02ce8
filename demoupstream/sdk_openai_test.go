package demoupstream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The official OpenAI SDK is the strictest judge of wire compatibility
// available offline: these tests point it at the server and check that it
// decodes every shape, stream and error into the values the behaviour
// promises.

const sdkKey = "sk-demo-sdk-key"

func openAIClient(t *testing.T, opts ...option.RequestOption) openai.Client {
	t.Helper()
	srv := serve(t, Config{APIKey: sdkKey, Strict: true})
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(srv.URL + "/v1/"),
		option.WithAPIKey(sdkKey),
		option.WithMaxRetries(0),
	}, opts...)...)
}

var weatherFunction = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name: "get_weather",
	Parameters: openai.FunctionParameters{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required":   []string{"city"},
	},
})

func TestOpenAISDKChat(t *testing.T) {
	client := openAIClient(t)
	got, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "demo-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."),
			openai.UserMessage("Hello SDK"),
		},
		Temperature: openai.Float(0.5),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.ID, "chatcmpl-") || got.Model != "demo-chat" || got.Created == 0 {
		t.Errorf("envelope %+v", got)
	}
	c := got.Choices[0]
	if c.Message.Content != "Echo: Hello SDK" || c.FinishReason != "stop" || string(c.Message.Role) != "assistant" {
		t.Errorf("choice %+v", c)
	}
	if got.Usage.PromptTokens != 4 || got.Usage.CompletionTokens != 3 || got.Usage.TotalTokens != 7 {
		t.Errorf("usage %+v", got.Usage)
	}
}

func TestOpenAISDKChatStream(t *testing.T) {
	client := openAIClient(t)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "demo-chat",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("count [[words:6]]")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	var finished string
	chunks := 0
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator rejected chunk %s", stream.Current().RawJSON())
		}
		if content, ok := acc.JustFinishedContent(); ok {
			finished = content
		}
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	// role, six pieces, finish, usage.
	if chunks != 9 {
		t.Errorf("%d chunks", chunks)
	}
	if want := "w1 w2 w3 w4 w5 w6"; acc.Choices[0].Message.Content != want || finished != want {
		t.Errorf("content %q, finished %q", acc.Choices[0].Message.Content, finished)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.PromptTokens != 2 || acc.Usage.CompletionTokens != 6 {
		t.Errorf("finish %q usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
}

func TestOpenAISDKChatToolCall(t *testing.T) {
	client := openAIClient(t)
	params := openai.ChatCompletionNewParams{
		Model:    "demo-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Lisbon")},
		Tools:    []openai.ChatCompletionToolUnionParam{weatherFunction},
	}
	wantArgs := `{"city":"Lisbon"}`
	wantID := "call_" + callDigest("get_weather", wantArgs)

	got, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	calls := got.Choices[0].Message.ToolCalls
	if got.Choices[0].FinishReason != "tool_calls" || len(calls) != 1 || calls[0].ID != wantID ||
		calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != wantArgs {
		t.Fatalf("plain tool call %s", got.RawJSON())
	}

	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	var finished *openai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = &tc
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if finished == nil || finished.ID != wantID || finished.Name != "get_weather" || finished.Arguments != wantArgs {
		t.Errorf("streamed tool call %+v", finished)
	}

	// The tool result goes back and is echoed.
	params.Messages = append(params.Messages, got.Choices[0].Message.ToParam(), openai.ToolMessage("18 C and sunny", wantID))
	got, err = client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != "Tool result: 18 C and sunny" {
		t.Errorf("after tool result %s", got.RawJSON())
	}
}

func TestOpenAISDKErrors(t *testing.T) {
	client := openAIClient(t)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "demo-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[[status:429]]")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" || apiErr.Type != "requests" {
		t.Errorf("rate limit error %v", err)
	}

	wrongKey := openAIClient(t, option.WithAPIKey("sk-not-the-key"))
	_, err = wrongKey.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "demo-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("auth error %v", err)
	}
}

func TestOpenAISDKResponses(t *testing.T) {
	client := openAIClient(t)
	got, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "demo-chat",
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello Responses")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.ID, "resp_") || got.Status != "completed" || got.OutputText() != "Echo: Hello Responses" {
		t.Errorf("response %s", got.RawJSON())
	}
	if got.Usage.InputTokens != 4 || got.Usage.OutputTokens != 3 || got.Usage.TotalTokens != 7 {
		t.Errorf("usage %+v", got.Usage)
	}
}

func TestOpenAISDKResponsesStream(t *testing.T) {
	client := openAIClient(t)
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "demo-chat",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("stream this please")},
	})
	var deltas strings.Builder
	var types []string
	var completed responses.Response
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			completed = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if !slices.Equal(types, want) {
		t.Errorf("events %q", types)
	}
	if deltas.String() != "Echo: stream this please" || completed.OutputText() != deltas.String() || completed.Usage.OutputTokens != 4 {
		t.Errorf("deltas %q, completed %s", deltas.String(), completed.RawJSON())
	}
}

func TestOpenAISDKResponsesToolCall(t *testing.T) {
	client := openAIClient(t)
	params := responses.ResponseNewParams{
		Model: "demo-chat",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Porto")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name:       "get_weather",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}},
	}
	got, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	fc := got.Output[0].AsFunctionCall()
	wantArgs := `{"city":"Porto"}`
	if got.Output[0].Type != "function_call" || fc.Name != "get_weather" || fc.Arguments != wantArgs || fc.CallID != "call_"+callDigest("get_weather", wantArgs) {
		t.Fatalf("output %s", got.RawJSON())
	}

	stream := client.Responses.NewStreaming(context.Background(), params)
	var args strings.Builder
	var done string
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.function_call_arguments.delta":
			args.WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			done = ev.Arguments
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if args.String() != wantArgs || done != wantArgs {
		t.Errorf("streamed arguments %q, done %q", args.String(), done)
	}

	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("Porto", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name),
		responses.ResponseInputItemParamOfFunctionCallOutput("rainy"),
	}}
	params.Input.OfInputItemList[2].OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	got, err = client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got.OutputText() != "Tool result: rainy" {
		t.Errorf("after tool output %s", got.RawJSON())
	}
}

func TestOpenAISDKEmbeddings(t *testing.T) {
	client := openAIClient(t)
	for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
		got, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
			Model:          "demo-embed",
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"alpha beta", "gamma"}},
			EncodingFormat: format,
			Dimensions:     openai.Int(32),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Data) != 2 || got.Usage.PromptTokens != 3 || got.Model != "demo-embed" {
			t.Fatalf("%s: %s", format, got.RawJSON())
		}
		for i, text := range []string{"alpha beta", "gamma"} {
			want := expected(text, 32)
			v := got.Data[i].Embedding
			if len(v) != 32 {
				t.Fatalf("%s: %d dimensions", format, len(v))
			}
			for j := range v {
				if float32(v[j]) != want[j] {
					t.Fatalf("%s: vector %d differs at %d: %v != %v", format, i, j, v[j], want[j])
				}
			}
		}
	}
}
