package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func convertFixture(t *testing.T, name string, upstream, client Dialect) ([]byte, Usage, Result) {
	t.Helper()
	out, u, r, err := ConvertResponse(upstream, client, convFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	return out, u, r
}

func TestMessagesResponseToChat(t *testing.T) {
	out, u, r := convertFixture(t, "messages_response_tools.json", Messages, Chat)
	convWant(t, out, "id", "chatcmpl-01CNWVBgHzR4rdJVr6hwj4X2")
	convWant(t, out, "object", "chat.completion")
	convWant(t, out, "model", "claude-3-5-sonnet-20240620")
	convWant(t, out, "choices.#", "1")
	convWant(t, out, "choices.0.index", "0")
	convWant(t, out, "choices.0.message.role", "assistant")
	convWant(t, out, "choices.0.message.content", "To answer your questions, I'll need to search for information about the Tigers game and check the weather. Let me do that for you.")
	convWant(t, out, "choices.0.message.tool_calls", `[{"id":"toolu_01VAqJ7KsLmVcshpji8zXzHr","type":"function","function":{"name":"search","arguments":"{\"query\":\"Detroit Tigers game schedule today\"}"}}]`)
	convWant(t, out, "choices.0.finish_reason", "tool_calls")
	convWant(t, out, "usage", `{"prompt_tokens":446,"completion_tokens":84,"total_tokens":530}`)
	if !gjson.GetBytes(out, "created").Exists() {
		t.Error("no created timestamp")
	}
	if u != (Usage{InputTokens: 446, OutputTokens: 84, Known: true}) || r.FinishReason != "tool_calls" || len(r.ToolCalls) != 1 {
		t.Errorf("usage %+v result %+v", u, r)
	}
}

func TestResponsesResponseToChat(t *testing.T) {
	out, u, _ := convertFixture(t, "responses_response_text.json", Responses, Chat)
	convWant(t, out, "id", "chatcmpl-0cd5d6b8310055d600696a1776b42c81a199fbb02248a8bfa0")
	convWant(t, out, "created", "1768560502")
	convWant(t, out, "choices.0.message.content", "- I provide clear, accurate, and concise answers tailored to your requests.\n- I can process and summarize large volumes of information quickly.\n- I adapt my responses based on your needs and instructions for precision and relevance.")
	convAbsent(t, out, "choices.0.message.tool_calls")
	convWant(t, out, "choices.0.finish_reason", "stop")
	convWant(t, out, "usage", `{"prompt_tokens":12033,"completion_tokens":44,"total_tokens":12077,"prompt_tokens_details":{"cached_tokens":11904}}`)
	if u != (Usage{InputTokens: 12033, OutputTokens: 44, CacheReadTokens: 11904, Known: true}) {
		t.Errorf("usage %+v", u)
	}

	out, _, r := convertFixture(t, "responses_response_tool.json", Responses, Chat)
	convWant(t, out, "choices.0.message.content", "null")
	convWant(t, out, "choices.0.message.tool_calls.0.id", "call_CJSaa2u51JG996575oVljuNq")
	convWant(t, out, "choices.0.message.tool_calls.0.function", `{"name":"add","arguments":"{\"a\":3,\"b\":5}"}`)
	convWant(t, out, "choices.0.finish_reason", "tool_calls")
	if r.ToolCalls[0].Arguments != `{"a":3,"b":5}` {
		t.Errorf("result %+v", r)
	}
}

func TestResponsesIncompleteToChat(t *testing.T) {
	body := []byte(`{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"m","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Once"}]}],"usage":{"input_tokens":2,"output_tokens":16}}`)
	out, _, r, err := ConvertResponse(Responses, Chat, body)
	if err != nil {
		t.Fatal(err)
	}
	convWant(t, out, "choices.0.finish_reason", "length")
	convWant(t, out, "choices.0.message.content", "Once")
	if r.FinishReason != "length" {
		t.Errorf("result %+v", r)
	}
}
