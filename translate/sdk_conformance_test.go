package translate

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// These tests read what the gateway sends to clients with the official client
// SDKs of each shape, the way a client application would: the SDK's stream
// accumulators for streams, its response types for bodies.

// sdkView is what a client SDK made of a completion.
type sdkView struct {
	text   string
	calls  []ToolCall
	finish string
	input  int64
	output int64
}

func chatSDKStream(t *testing.T, events []sseEvent) sdkView {
	t.Helper()
	var acc openai.ChatCompletionAccumulator
	for _, ev := range events {
		if ev.data == "[DONE]" {
			break
		}
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(ev.data), &chunk); err != nil {
			t.Fatalf("chunk %s: %v", ev.data, err)
		}
		if !acc.AddChunk(chunk) {
			t.Fatalf("the accumulator refused chunk %s", ev.data)
		}
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("%d choices", len(acc.Choices))
	}
	return chatSDKView(acc.ChatCompletion)
}

func chatSDKView(c openai.ChatCompletion) sdkView {
	v := sdkView{input: c.Usage.PromptTokens, output: c.Usage.CompletionTokens}
	if len(c.Choices) == 0 {
		return v
	}
	msg := c.Choices[0].Message
	v.text, v.finish = msg.Content, c.Choices[0].FinishReason
	for _, tc := range msg.ToolCalls {
		v.calls = append(v.calls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return v
}

func messagesSDKStream(t *testing.T, events []sseEvent) sdkView {
	t.Helper()
	var msg anthropic.Message
	for _, ev := range events {
		var e anthropic.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("event %s: %v", ev.data, err)
		}
		if err := msg.Accumulate(e); err != nil {
			t.Fatalf("the accumulator refused %s: %v", ev.data, err)
		}
	}
	return messagesSDKView(t, msg)
}

func messagesSDKView(t *testing.T, msg anthropic.Message) sdkView {
	t.Helper()
	v := sdkView{
		finish: chatFinishFromAnthropic(string(msg.StopReason)),
		input:  msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens,
		output: msg.Usage.OutputTokens,
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			v.text += b.Text
		case "tool_use":
			v.calls = append(v.calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		}
	}
	return v
}

func responsesSDKStream(t *testing.T, events []sseEvent) sdkView {
	t.Helper()
	var done *responses.Response
	for _, ev := range events {
		var e responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("event %s: %v", ev.data, err)
		}
		if e.Type == "response.completed" {
			r := e.AsResponseCompleted().Response
			done = &r
		}
	}
	if done == nil {
		t.Fatal("no response.completed")
	}
	return responsesSDKView(*done)
}

func responsesSDKView(r responses.Response) sdkView {
	v := sdkView{text: r.OutputText(), input: r.Usage.InputTokens, output: r.Usage.OutputTokens}
	for _, item := range r.Output {
		if item.Type == "function_call" {
			fc := item.AsFunctionCall()
			v.calls = append(v.calls, ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments})
		}
	}
	v.finish = chatFinishFromResponses(string(r.Status), string(r.IncompleteDetails.Reason), len(v.calls) > 0)
	return v
}

func TestClientSDKsReadStreams(t *testing.T) {
	for _, c := range streamCases {
		if c.failure != "" {
			continue
		}
		for _, client := range completionDialects {
			t.Run(c.file+"->"+client.String(), func(t *testing.T) {
				out, _ := runPipeline(t, c, client)
				events := readSSE(t, out)
				var v sdkView
				switch client {
				case Chat:
					v = chatSDKStream(t, events)
				case Messages:
					v = messagesSDKStream(t, events)
				case Responses:
					v = responsesSDKStream(t, events)
				}
				if v.text != c.text || v.finish != c.finish || !reflect.DeepEqual(v.calls, c.calls) {
					t.Errorf("SDK read text %q calls %+v finish %q\nwant %q %+v %q", v.text, v.calls, v.finish, c.text, c.calls, c.finish)
				}
				if c.usage.Known && (v.input != int64(c.usage.InputTokens) || v.output != int64(c.usage.OutputTokens)) {
					t.Errorf("SDK read usage %d/%d, want %+v", v.input, v.output, c.usage)
				}
			})
		}
	}
}

func TestClientSDKsReadResponses(t *testing.T) {
	for _, name := range []struct {
		file     string
		upstream Dialect
	}{
		{"chat_response_text.json", Chat},
		{"chat_response_tool.json", Chat},
		{"messages_response_text.json", Messages},
		{"messages_response_tools.json", Messages},
		{"responses_response_text.json", Responses},
		{"responses_response_tool.json", Responses},
	} {
		for _, client := range completionDialects {
			if client == name.upstream {
				continue
			}
			out, u, r, err := ConvertResponse(name.upstream, client, convFixture(t, name.file))
			if err != nil {
				t.Fatal(err)
			}
			var v sdkView
			switch client {
			case Chat:
				var c openai.ChatCompletion
				if err := json.Unmarshal(out, &c); err != nil {
					t.Fatal(err)
				}
				v = chatSDKView(c)
			case Messages:
				var m anthropic.Message
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatal(err)
				}
				v = messagesSDKView(t, m)
			case Responses:
				var resp responses.Response
				if err := json.Unmarshal(out, &resp); err != nil {
					t.Fatal(err)
				}
				v = responsesSDKView(resp)
			}
			want := sdkView{text: r.Text, calls: r.ToolCalls, finish: r.FinishReason, input: int64(u.InputTokens), output: int64(u.OutputTokens)}
			// Tool arguments come back compact in the messages shape's input.
			for i := range want.calls {
				want.calls[i].Arguments = compactJSON(want.calls[i].Arguments)
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("%s -> %s: SDK read %+v\nwant %+v", name.file, client, v, want)
			}
		}
	}
}
