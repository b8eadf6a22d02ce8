package translate

import (
	"testing"

	"github.com/tidwall/sjson"
)

func TestChatResponseToMessages(t *testing.T) {
	out, u, r := convertFixture(t, "chat_response_tool.json", Chat, Messages)
	convWant(t, out, "id", "msg_BwkyFElDIr1egmFyfQ9z4vPBto7m2")
	convWant(t, out, "type", "message")
	convWant(t, out, "role", "assistant")
	convWant(t, out, "model", "gpt-4.1-2025-04-14")
	convWant(t, out, "content", `[{"type":"tool_use","id":"call_KjzAbhiZC6nk81tQzL7pwlpc","name":"read_file","input":{"path":"README.md"}}]`)
	convWant(t, out, "stop_reason", "tool_use")
	convWant(t, out, "stop_sequence", "null")
	convWant(t, out, "usage", `{"input_tokens":60,"output_tokens":15}`)
	if u != (Usage{InputTokens: 60, OutputTokens: 15, Known: true}) || r.ToolCalls[0].Name != "read_file" {
		t.Errorf("usage %+v result %+v", u, r)
	}

	out, _, _ = convertFixture(t, "chat_response_text.json", Chat, Messages)
	convWant(t, out, "content", `[{"type":"text","text":"Hello! How can I assist you today?"}]`)
	convWant(t, out, "stop_reason", "end_turn")
}

func TestChatFinishReasonsToMessages(t *testing.T) {
	for finish, stop := range map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "end_turn"} {
		body, _ := sjson.SetBytes(convFixture(t, "chat_response_text.json"), "choices.0.finish_reason", finish)
		out, _, _, err := ConvertResponse(Chat, Messages, body)
		if err != nil {
			t.Fatal(err)
		}
		convWant(t, out, "stop_reason", stop)
	}
}

func TestChatResponseToMessagesBadArguments(t *testing.T) {
	body, _ := sjson.SetBytes(convFixture(t, "chat_response_tool.json"), "choices.0.message.tool_calls.0.function.arguments", `{"path":"READ`)
	out, _, r, err := ConvertResponse(Chat, Messages, body)
	if err != nil {
		t.Fatal(err)
	}
	// A model's truncated arguments cannot be an input object.
	convWant(t, out, "content.0.input", "{}")
	if r.ToolCalls[0].Arguments != `{"path":"READ` {
		t.Errorf("the result keeps what the model produced: %+v", r)
	}
}

func TestResponsesResponseToMessages(t *testing.T) {
	out, _, _ := convertFixture(t, "responses_response_text.json", Responses, Messages)
	convWant(t, out, "id", "msg_0cd5d6b8310055d600696a1776b42c81a199fbb02248a8bfa0")
	convWant(t, out, "content.#", "1")
	convWant(t, out, "content.0.type", "text")
	convWant(t, out, "stop_reason", "end_turn")
	// Cached prompt tokens are counted apart in the messages shape.
	convWant(t, out, "usage", `{"input_tokens":129,"cache_read_input_tokens":11904,"output_tokens":44}`)

	out, _, _ = convertFixture(t, "responses_response_tool.json", Responses, Messages)
	convWant(t, out, "content", `[{"type":"tool_use","id":"call_CJSaa2u51JG996575oVljuNq","name":"add","input":{"a":3,"b":5}}]`)
	convWant(t, out, "stop_reason", "tool_use")
}
