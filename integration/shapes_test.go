package integration

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
)

// The two demo models: one behind an OpenAI-dialect upstream, one behind an
// Anthropic-dialect upstream. Every client shape must work against both.
var shapeModels = []struct{ model, provider string }{
	{"demo/demo-chat", "demo"},
	{"demo-anthropic/demo-claude", "demo-anthropic"},
}

func anthropicClient(g *gateway) anthropic.Client {
	// Messages clients take the host without /v1 and append /v1/messages.
	return anthropic.NewClient(aoption.WithBaseURL(strings.TrimSuffix(g.base, "/v1")+"/"),
		aoption.WithAPIKey(demoKey), aoption.WithMaxRetries(0))
}

var cityTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
	Name:        "get_weather",
	InputSchema: anthropic.ToolInputSchemaParam{Properties: json.RawMessage(`{"city":{"type":"string"}}`), Required: []string{"city"}},
}}

var cityFunction = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name:       "get_weather",
	Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
})

const wantArgs = `{"city":"Nice"}`

func TestMessagesShapeWithAnthropicSDK(t *testing.T) {
	g := startGateway(t)
	client := anthropicClient(g)
	ctx := context.Background()
	for _, m := range shapeModels {
		t.Run(m.model, func(t *testing.T) {
			params := anthropic.MessageNewParams{
				Model:     anthropic.Model(m.model),
				MaxTokens: 100,
				System:    []anthropic.TextBlockParam{{Text: "be brief"}},
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello shapes"))},
			}
			got, err := client.Messages.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Content) != 1 || got.Content[0].Text != "Echo: hello shapes" || got.StopReason != anthropic.StopReasonEndTurn ||
				!strings.HasPrefix(got.ID, "msg_") || string(got.Model) != m.model {
				t.Fatalf("message: %s", got.RawJSON())
			}
			if got.Usage.InputTokens != 4 || got.Usage.OutputTokens != 3 {
				t.Fatalf("usage: %s", got.RawJSON())
			}
			if d := gjson.Get(got.RawJSON(), "delivery"); d.Get("provider").String() != m.provider || d.Get("cost_usd").Float() <= 0 {
				t.Fatalf("delivery: %s", d.Raw)
			}
			g.get("/calls/"+got.ID, http.StatusOK)

			stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
				Model: anthropic.Model(m.model), MaxTokens: 100,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("stream [[words:12]]"))},
			})
			var msg anthropic.Message
			var delivery gjson.Result
			for stream.Next() {
				ev := stream.Current()
				if err := msg.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
				if ev.Type == "message_delta" {
					delivery = gjson.Get(ev.RawJSON(), "delivery")
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Text != "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12" || msg.StopReason != anthropic.StopReasonEndTurn {
				t.Fatalf("streamed: %s", msg.RawJSON())
			}
			if msg.Usage.InputTokens != 2 || msg.Usage.OutputTokens != 12 {
				t.Fatalf("streamed usage: %+v", msg.Usage)
			}
			if delivery.Get("provider").String() != m.provider || !delivery.Get("fingerprints.exchange").Exists() {
				t.Fatalf("stream delivery: %s", delivery.Raw)
			}

			// Tool round trip, plain and streamed.
			tp := anthropic.MessageNewParams{
				Model: anthropic.Model(m.model), MaxTokens: 100, Tools: []anthropic.ToolUnionParam{cityTool},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Nice"))},
			}
			call, err := client.Messages.New(ctx, tp)
			if err != nil {
				t.Fatal(err)
			}
			if call.StopReason != anthropic.StopReasonToolUse || len(call.Content) != 1 || call.Content[0].Name != "get_weather" ||
				string(call.Content[0].Input) != wantArgs || call.Content[0].ID == "" {
				t.Fatalf("tool use: %s", call.RawJSON())
			}
			stream = client.Messages.NewStreaming(ctx, tp)
			var smsg anthropic.Message
			for stream.Next() {
				if err := smsg.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if smsg.StopReason != anthropic.StopReasonToolUse || len(smsg.Content) != 1 || smsg.Content[0].Name != "get_weather" ||
				string(smsg.Content[0].Input) != wantArgs {
				t.Fatalf("streamed tool use: %s", smsg.RawJSON())
			}
			tp.Messages = append(tp.Messages, call.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(call.Content[0].ID, "22 C", false)))
			after, err := client.Messages.New(ctx, tp)
			if err != nil {
				t.Fatal(err)
			}
			if after.Content[0].Text != "Tool result: 22 C" {
				t.Fatalf("after tool result: %s", after.RawJSON())
			}
		})
	}
	// Errors on /messages carry the top-level type Anthropic clients expect.
	status, body, _ := g.do(http.MethodPost, "/messages", demoKey, `{"model":"demo/demo-chat","messages":[{"role":"user","content":"x"}]}`)
	if status != http.StatusBadRequest || gjson.GetBytes(body, "type").String() != "error" || gjson.GetBytes(body, "error.param").String() != "max_tokens" {
		t.Fatalf("messages error: %d %s", status, body)
	}
}

func TestChatShapeAgainstBothDialects(t *testing.T) {
	g := startGateway(t)
	client := openaiClient(g, demoKey)
	ctx := context.Background()
	for _, m := range shapeModels {
		t.Run(m.model, func(t *testing.T) {
			got, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    m.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hello shapes")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.Choices[0].Message.Content != "Echo: hello shapes" || got.Choices[0].FinishReason != "stop" ||
				got.Usage.PromptTokens != 4 || got.Usage.CompletionTokens != 3 || got.Usage.TotalTokens != 7 {
				t.Fatalf("chat: %s", got.RawJSON())
			}
			params := openai.ChatCompletionNewParams{
				Model:         m.model,
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Nice")},
				Tools:         []openai.ChatCompletionToolUnionParam{cityFunction},
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			}
			stream := client.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			var last string
			for stream.Next() {
				acc.AddChunk(stream.Current())
				last = stream.Current().RawJSON()
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			tc := acc.Choices[0].Message.ToolCalls
			if len(tc) != 1 || tc[0].Function.Name != "get_weather" || tc[0].Function.Arguments != wantArgs || tc[0].ID == "" ||
				acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.PromptTokens != 1 || acc.Usage.CompletionTokens == 0 {
				t.Fatalf("streamed tool call: %+v usage %+v", acc.Choices[0], acc.Usage)
			}
			if gjson.Get(last, "delivery.provider").String() != m.provider {
				t.Fatalf("last chunk: %s", last)
			}
			params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(), openai.ToolMessage("22 C", tc[0].ID))
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{} // only allowed with stream
			after, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				var apiErr *openai.Error
				if errors.As(err, &apiErr) {
					t.Fatalf("%v: %s", err, apiErr.RawJSON())
				}
				t.Fatal(err)
			}
			if after.Choices[0].Message.Content != "Tool result: 22 C" {
				t.Fatalf("after tool result: %s", after.RawJSON())
			}
		})
	}
}

func TestResponsesShapeAgainstBothDialects(t *testing.T) {
	g := startGateway(t)
	client := openaiClient(g, demoKey)
	ctx := context.Background()
	tool := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
		Name:       "get_weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	}}}
	for _, m := range shapeModels {
		t.Run(m.model, func(t *testing.T) {
			got, err := client.Responses.New(ctx, responses.ResponseNewParams{
				Model:        m.model,
				Instructions: openai.String("be brief"),
				Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("hello shapes")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.OutputText() != "Echo: hello shapes" || got.Status != "completed" || got.Usage.InputTokens != 4 || got.Usage.OutputTokens != 3 ||
				!strings.HasPrefix(got.ID, "resp_") {
				t.Fatalf("response: %s", got.RawJSON())
			}
			if gjson.Get(got.RawJSON(), "delivery.provider").String() != m.provider {
				t.Fatalf("delivery: %s", got.RawJSON())
			}
			stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
				Model: m.model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("stream [[words:7]]")},
			})
			var deltas strings.Builder
			var completed string
			for stream.Next() {
				ev := stream.Current()
				switch ev.Type {
				case "response.output_text.delta":
					deltas.WriteString(ev.Delta)
				case "response.completed":
					completed = ev.RawJSON()
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if deltas.String() != "w1 w2 w3 w4 w5 w6 w7" || gjson.Get(completed, "response.usage.output_tokens").Int() != 7 ||
				gjson.Get(completed, "response.delivery.provider").String() != m.provider {
				t.Fatalf("streamed %q, completed %s", deltas.String(), completed)
			}
			params := responses.ResponseNewParams{Model: m.model, Tools: tool,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Nice")}}
			call, err := client.Responses.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if len(call.Output) == 0 || call.Output[0].Type != "function_call" {
				t.Fatalf("function call: %s", call.RawJSON())
			}
			fc := call.Output[0].AsFunctionCall()
			if fc.Name != "get_weather" || fc.Arguments != wantArgs || fc.CallID == "" {
				t.Fatalf("function call: %s", call.RawJSON())
			}
			params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("Nice", responses.EasyInputMessageRoleUser),
				responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name),
				responses.ResponseInputItemParamOfFunctionCallOutput("22 C"),
			}}
			params.Input.OfInputItemList[2].OfFunctionCallOutput.CallID = openai.String(fc.CallID)
			after, err := client.Responses.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if after.OutputText() != "Tool result: 22 C" {
				t.Fatalf("after tool output: %s", after.RawJSON())
			}
		})
	}
}

func TestEmbeddingsWithOpenAISDK(t *testing.T) {
	g := startGateway(t)
	client := openaiClient(g, demoKey)
	ctx := context.Background()
	inputs := []string{"alpha beta", "gamma"}
	floats, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "demo/demo-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs}, Dimensions: openai.Int(8),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(floats.Data) != 2 || len(floats.Data[0].Embedding) != 8 || floats.Usage.PromptTokens != 3 {
		t.Fatalf("floats: %s", floats.RawJSON())
	}
	d := gjson.Get(floats.RawJSON(), "delivery")
	if d.Get("provider").String() != "demo" || !strings.HasPrefix(d.Get("fingerprints.prompt").String(), "fp_p_") || d.Get("fingerprints.exchange").Type != gjson.Null {
		t.Fatalf("embeddings delivery: %s", d.Raw)
	}
	// base64 carries the same vectors as little-endian float32.
	status, body, _ := g.do(http.MethodPost, "/embeddings", demoKey,
		`{"model":"demo/demo-embed","input":["alpha beta","gamma"],"dimensions":8,"encoding_format":"base64"}`)
	if status != http.StatusOK {
		t.Fatalf("base64: %d %s", status, body)
	}
	raw, err := base64.StdEncoding.DecodeString(gjson.GetBytes(body, "data.0.embedding").String())
	if err != nil || len(raw) != 32 {
		t.Fatalf("base64 payload: %v %d", err, len(raw))
	}
	for i := 0; i < 8; i++ {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.Abs(float64(v)-floats.Data[0].Embedding[i]) > 1e-6 {
			t.Fatalf("component %d: %v vs %v", i, v, floats.Data[0].Embedding[i])
		}
	}
	// Other input forms: a string, and content parts.
	for _, in := range []string{`"alpha beta"`, `[{"content":[{"type":"text","text":"alpha beta"}]}]`} {
		status, body, _ = g.do(http.MethodPost, "/embeddings", demoKey, `{"model":"demo/demo-embed","input":`+in+`}`)
		if status != http.StatusOK || gjson.GetBytes(body, "data.#").Int() != 1 {
			t.Fatalf("input %s: %d %s", in, status, body)
		}
	}
	for _, tc := range []struct{ body, param string }{
		{`{"model":"demo/demo-embed","input":""}`, "input"},
		{`{"model":"demo/demo-embed","input":[]}`, "input"},
		{`{"model":"demo/demo-embed","input":"x","dimensions":0}`, "dimensions"},
		{`{"model":"demo/demo-embed","input":"x","encoding_format":"hex"}`, "encoding_format"},
		{`{"model":"demo/demo-embed","input":"x","quantization":"q2"}`, "quantization"},
		{`{"model":"demo/demo-embed","input":"x","quantization":"q4"}`, "quantization"},
		{`{"model":"demo/demo-chat","input":"x"}`, "model"},
	} {
		status, body, _ = g.do(http.MethodPost, "/embeddings", demoKey, tc.body)
		if status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", tc.body, status, body)
		}
		assertSpecError(t, body, "invalid_request_error", tc.param)
	}
}
