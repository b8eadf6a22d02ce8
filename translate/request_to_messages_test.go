package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The agent fixtures hold the same coding-agent conversation in each client
// shape: a system prompt (and a developer message), a user turn with a
// base64 and a URL image, two parallel tool calls and their results, a
// third call and result, an assistant answer and a follow-up question.
const (
	agentPNG    = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	agentDev    = "Respond in plain text. Tests are run with `go test ./translate/`."
	agentA1     = "I'll look at the module file and run the translate tests to see the failure."
	agentU2     = "Please fix it and run the tests again."
	agentScreen = "https://ci.example.com/runs/8812/screenshot.png"
)

// agentSystem is the system prompt of the agent fixtures, read from the chat
// one so that the tests do not repeat it.
func agentSystem(t *testing.T) string {
	return gjson.GetBytes(convFixture(t, "chat_request_agent.json"), "messages.0.content").Str
}

// gatewayOnly are fields of the agent fixtures that no upstream may see.
var gatewayOnly = []string{"tier", "tier_strict", "forbid_atlas_network", "quantization", "metadata.operation_id"}

func translateFixture(t *testing.T, name string, client, upstream Dialect, stream bool) []byte {
	t.Helper()
	out, err := translateRequest(client, upstream, convFixture(t, name), "upstream-model", stream)
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	convAbsent(t, out, gatewayOnly...)
	convWant(t, out, "model", "upstream-model")
	return out
}

func TestChatRequestToMessages(t *testing.T) {
	out := translateFixture(t, "chat_request_agent.json", Chat, Messages, true)
	convWant(t, out, "max_tokens", "2048")
	convWant(t, out, "system", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "messages.#", "7")
	convWant(t, out, "messages.#.role", `["user","assistant","user","assistant","user","assistant","user"]`)
	convWant(t, out, "messages.0.content.0", `{"type":"text","text":"The translate tests started failing after my last change to the SSE reader. Can you find out why? Here is a screenshot of the CI run."}`)
	convWant(t, out, "messages.0.content.1", `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+agentPNG+`"}}`)
	convWant(t, out, "messages.0.content.2", `{"type":"image","source":{"type":"url","url":"`+agentScreen+`"}}`)
	convWant(t, out, "messages.1.content.0", `{"type":"text","text":"`+agentA1+`"}`)
	convWant(t, out, "messages.1.content.1", `{"type":"tool_use","id":"call_Qm2v8ZP1tUeXk3LqS0aHrB7d","name":"read_file","input":{"path":"go.mod"}}`)
	convWant(t, out, "messages.1.content.2.input", `{"command":"go test ./translate/","timeout_seconds":120}`)
	// Both results in one user message, right after the calls.
	convWant(t, out, "messages.2.content.#", "2")
	convWant(t, out, "messages.2.content.0.type", "tool_result")
	convWant(t, out, "messages.2.content.0.tool_use_id", "call_Qm2v8ZP1tUeXk3LqS0aHrB7d")
	if c := gjson.GetBytes(out, "messages.2.content.0.content").Str; !strings.HasPrefix(c, "module github.com/modelgate/gateway\n") {
		t.Errorf("tool result content %q", c)
	}
	convWant(t, out, "messages.2.content.1.tool_use_id", "call_7YpTz3WnK1cR5sVbE2xLgH0u")
	convWant(t, out, "messages.3.content.#", "1")
	convWant(t, out, "messages.3.content.0.name", "read_file")
	convWant(t, out, "messages.4.content.0.tool_use_id", "call_Xc4Jd9Hs2Rk6Wq1Nz8Ep3Tv5")
	convWant(t, out, "messages.6.content", `[{"type":"text","text":"`+agentU2+`"}]`)
	convWant(t, out, "tools.#", "4")
	convWant(t, out, "tools.0.name", "read_file")
	convWant(t, out, "tools.0.description", "Read a file of the repository and return its contents with line numbers.")
	convWant(t, out, "tools.0.input_schema.required", `["path"]`)
	convWant(t, out, "tools.2.input_schema.properties.timeout_seconds", `{"type":"integer","minimum":1,"maximum":600}`)
	convWant(t, out, "tool_choice", `{"type":"auto"}`)
	// 1.4 is valid for OpenAI but out of the messages shape's 0..1 range.
	convWant(t, out, "temperature", "1")
	// Current models of the messages shape reject temperature with top_p.
	convAbsent(t, out, "top_p")
	convWant(t, out, "stop_sequences", `["\n\nHuman:"]`)
	convWant(t, out, "metadata", `{"user_id":"user-4821"}`)
	convWant(t, out, "stream", "true")
	convAbsent(t, out, "n", "presence_penalty", "frequency_penalty", "logprobs", "seed", "stream_options", "user", "top_k", "parallel_tool_calls")
}

func TestResponsesRequestToMessages(t *testing.T) {
	out := translateFixture(t, "responses_request_agent.json", Responses, Messages, false)
	convWant(t, out, "max_tokens", "8")
	convWant(t, out, "system", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "messages.#", "7")
	convWant(t, out, "messages.0.content.1.source", `{"type":"base64","media_type":"image/png","data":"`+agentPNG+`"}`)
	// The reasoning item is the upstream's own and is left out.
	convWant(t, out, "messages.1.content.#", "3")
	convWant(t, out, "messages.1.content.0.text", agentA1)
	convWant(t, out, "messages.1.content.2.input.timeout_seconds", "120")
	convWant(t, out, "messages.2.content.#", "2")
	convWant(t, out, "tool_choice", `{"type":"tool","name":"run_command","disable_parallel_tool_use":true}`)
	convWant(t, out, "temperature", "0.2")
	convAbsent(t, out, "top_p")
	convWant(t, out, "metadata.user_id", "user-4821")
	convAbsent(t, out, "stream", "store", "reasoning", "text", "truncation", "include", "instructions", "input")
}

func TestMessagesWriterRepairs(t *testing.T) {
	body := `{"model":"m","messages":[
		{"role":"system","content":"Be terse."},
		{"role":"user","content":"hi"},
		{"role":"assistant","content":""},
		{"role":"user","content":[{"type":"text","text":"again"},{"type":"image_url","image_url":{"url":"data:image/svg+xml,%3Csvg%2F%3E"}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"functions.lookup:0","type":"function","function":{"name":"lookup","arguments":"{\"q\": \"x\""}}]},
		{"role":"tool","tool_call_id":"functions.lookup:0","content":"found"}
	],"temperature":-0.5,"stop":["  ","END"],"tools":[{"type":"function","function":{"name":"lookup"}}],"tool_choice":"none","parallel_tool_calls":false}`
	out, err := translateRequest(Chat, Messages, []byte(body), "claude", false)
	if err != nil {
		t.Fatal(err)
	}
	convWant(t, out, "max_tokens", "4096")
	convWant(t, out, "system", "Be terse.")
	// The empty assistant message is dropped and the user turns around it
	// merged, since the shape needs alternating roles.
	convWant(t, out, "messages.#.role", `["user","assistant","user"]`)
	convWant(t, out, "messages.0.content.#", "3")
	convWant(t, out, "messages.0.content.2.source", `{"type":"base64","media_type":"image/svg+xml","data":"PHN2Zy8+"}`)
	// Truncated arguments become an empty input; ids are made valid, the
	// same way on the call and on its result.
	convWant(t, out, "messages.1.content.0", `{"type":"tool_use","id":"functions_lookup_0","name":"lookup","input":{}}`)
	convWant(t, out, "messages.2.content.0", `{"type":"tool_result","tool_use_id":"functions_lookup_0","content":"found"}`)
	convWant(t, out, "temperature", "0")
	convWant(t, out, "stop_sequences", `["END"]`)
	convWant(t, out, "tools.0", `{"name":"lookup","input_schema":{"type":"object","properties":{}}}`)
	convWant(t, out, "tool_choice", `{"type":"none"}`)
}

func TestMessagesWriterKeepsLoneTopP(t *testing.T) {
	out, err := translateRequest(Chat, Messages, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":0.5,"max_tokens":9}`), "claude", false)
	if err != nil {
		t.Fatal(err)
	}
	convWant(t, out, "top_p", "0.5")
	convWant(t, out, "max_tokens", "9")
	convAbsent(t, out, "temperature", "tools", "tool_choice", "system")
}
