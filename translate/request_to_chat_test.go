package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestMessagesRequestToChat(t *testing.T) {
	out := translateFixture(t, "messages_request_agent.json", Messages, Chat, true)
	convWant(t, out, "messages.#", "9")
	convWant(t, out, "messages.#.role", `["system","user","assistant","tool","tool","assistant","tool","assistant","user"]`)
	convWant(t, out, "messages.0.content", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "messages.1.content.1", `{"type":"image_url","image_url":{"url":"data:image/png;base64,`+agentPNG+`"}}`)
	convWant(t, out, "messages.1.content.2", `{"type":"image_url","image_url":{"url":"`+agentScreen+`"}}`)
	// The thinking block is left out; the text and the calls remain.
	convWant(t, out, "messages.2.content", agentA1)
	convWant(t, out, "messages.2.tool_calls.#", "2")
	convWant(t, out, "messages.2.tool_calls.0", `{"id":"toolu_Qm2v8ZP1tUeXk3LqS0aHrB7d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"go.mod\"}"}}`)
	convWant(t, out, "messages.2.tool_calls.1.function.arguments", `{"command":"go test ./translate/","timeout_seconds":120}`)
	convWant(t, out, "messages.3.tool_call_id", "toolu_Qm2v8ZP1tUeXk3LqS0aHrB7d")
	convWant(t, out, "messages.4.tool_call_id", "toolu_7YpTz3WnK1cR5sVbE2xLgH0u")
	convWant(t, out, "messages.5.content", "null")
	convWant(t, out, "messages.5.tool_calls.0.function.name", "read_file")
	if c := gjson.GetBytes(out, "messages.6.content"); c.Type != gjson.String || len(c.Str) < 1000 {
		t.Errorf("tool result from a text block array: %.80s", c.Raw)
	}
	convWant(t, out, "messages.8.content", agentU2)
	convWant(t, out, "tools.0.type", "function")
	convWant(t, out, "tools.0.function.name", "read_file")
	convWant(t, out, "tools.0.function.parameters.required", `["path"]`)
	convWant(t, out, "tool_choice", "auto")
	convWant(t, out, "max_completion_tokens", "2048")
	convWant(t, out, "temperature", "0.7")
	convWant(t, out, "top_p", "0.9")
	convWant(t, out, "stop", `["\n\nHuman:"," "]`)
	convWant(t, out, "user", "user-4821")
	convWant(t, out, "stream", "true")
	convWant(t, out, "stream_options.include_usage", "true")
	convAbsent(t, out, "top_k", "thinking", "metadata", "system", "max_tokens", "stop_sequences", "parallel_tool_calls")
}

func TestResponsesRequestToChat(t *testing.T) {
	out := translateFixture(t, "responses_request_agent.json", Responses, Chat, false)
	convWant(t, out, "messages.#.role", `["system","user","assistant","tool","tool","assistant","tool","assistant","user"]`)
	convWant(t, out, "messages.0.content", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "messages.1.content.1.image_url", `{"url":"data:image/png;base64,`+agentPNG+`","detail":"high"}`)
	convWant(t, out, "messages.1.content.2.image_url.detail", "auto")
	convWant(t, out, "messages.2.content", agentA1)
	convWant(t, out, "messages.2.tool_calls.#.id", `["call_Qm2v8ZP1tUeXk3LqS0aHrB7d","call_7YpTz3WnK1cR5sVbE2xLgH0u"]`)
	convWant(t, out, "messages.7.content", "The reader only recognizes \"\\n\\n\" as the end of an event, so an event terminated by \"\\r\\n\\r\\n\" is never returned, and a partial event that arrives split across two writes is lost when the buffer is reset. I'll scan line by line instead, accepting both line endings, and keep unconsumed bytes across writes.")
	convWant(t, out, "tools.1.function.name", "write_file")
	convAbsent(t, out, "tools.1.function.strict")
	convWant(t, out, "tool_choice", `{"type":"function","function":{"name":"run_command"}}`)
	convWant(t, out, "parallel_tool_calls", "false")
	convWant(t, out, "max_completion_tokens", "8")
	convWant(t, out, "temperature", "0.2")
	convWant(t, out, "store", "true")
	convWant(t, out, "reasoning_effort", "low")
	convWant(t, out, "response_format", `{"type":"json_schema","json_schema":{"name":"fix","schema":{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"],"additionalProperties":false},"strict":true}}`)
	convWant(t, out, "metadata", `{"session":"s-91"}`)
	convWant(t, out, "user", "user-4821")
	convAbsent(t, out, "stream", "stream_options", "instructions", "input", "truncation", "include", "text", "reasoning", "max_output_tokens")
}

func TestChatWriterToolResultImages(t *testing.T) {
	body := `{"model":"m","max_tokens":50,"messages":[
		{"role":"user","content":"look"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"shot","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"partial"},{"type":"text","text":" render"},{"type":"image","source":{"type":"url","url":"https://x.test/a.png"}}]},
			{"type":"text","text":"what is it?"}
		]}]}`
	out, err := translateRequest(Messages, Chat, []byte(body), "gpt", false)
	if err != nil {
		t.Fatal(err)
	}
	convWant(t, out, "messages.#.role", `["user","assistant","tool","user"]`)
	convWant(t, out, "messages.1.tool_calls.0.function.arguments", "{}")
	convWant(t, out, "messages.2.content", `[{"type":"text","text":"partial"},{"type":"text","text":" render"}]`)
	// Chat tool messages carry text only: the image follows in the user
	// message.
	convWant(t, out, "messages.3.content", `[{"type":"text","text":"what is it?"},{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]`)
}
