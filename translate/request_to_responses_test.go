package translate

import "testing"

func TestChatRequestToResponses(t *testing.T) {
	out := translateFixture(t, "chat_request_agent.json", Chat, Responses, true)
	convWant(t, out, "instructions", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "input.#", "10")
	convWant(t, out, "input.#.type", `["message","message","function_call","function_call","function_call_output","function_call_output","function_call","function_call_output","message","message"]`)
	convWant(t, out, "input.0.role", "user")
	convWant(t, out, "input.0.content.0.type", "input_text")
	convWant(t, out, "input.0.content.1", `{"type":"input_image","image_url":"data:image/png;base64,`+agentPNG+`","detail":"high"}`)
	convWant(t, out, "input.0.content.2", `{"type":"input_image","image_url":"`+agentScreen+`","detail":"auto"}`)
	convWant(t, out, "input.1", `{"type":"message","role":"assistant","content":"`+agentA1+`"}`)
	convWant(t, out, "input.2", `{"type":"function_call","call_id":"call_Qm2v8ZP1tUeXk3LqS0aHrB7d","name":"read_file","arguments":"{\"path\":\"go.mod\"}"}`)
	convWant(t, out, "input.4.call_id", "call_Qm2v8ZP1tUeXk3LqS0aHrB7d")
	convWant(t, out, "input.5.call_id", "call_7YpTz3WnK1cR5sVbE2xLgH0u")
	convWant(t, out, "input.9", `{"type":"message","role":"user","content":"`+agentU2+`"}`)
	convWant(t, out, "tools.0.type", "function")
	convWant(t, out, "tools.0.name", "read_file")
	convWant(t, out, "tools.0.parameters.properties.path.type", "string")
	// The responses shape defaults to strict schemas; the chat tool was not.
	convWant(t, out, "tools.0.strict", "false")
	convWant(t, out, "tool_choice", "auto")
	convWant(t, out, "parallel_tool_calls", "true")
	convWant(t, out, "max_output_tokens", "2048")
	convWant(t, out, "temperature", "1.4")
	convWant(t, out, "top_p", "0.9")
	convWant(t, out, "user", "user-4821")
	convWant(t, out, "metadata", `{"session":"s-91"}`)
	convWant(t, out, "store", "false")
	convWant(t, out, "stream", "true")
	convAbsent(t, out, "stop", "n", "presence_penalty", "frequency_penalty", "seed", "logprobs", "stream_options", "messages", "max_tokens")
}

func TestMessagesRequestToResponses(t *testing.T) {
	out := translateFixture(t, "messages_request_agent.json", Messages, Responses, false)
	convWant(t, out, "instructions", agentSystem(t)+"\n\n"+agentDev)
	convWant(t, out, "input.#", "10")
	convWant(t, out, "input.0.content.1", `{"type":"input_image","image_url":"data:image/png;base64,`+agentPNG+`","detail":"auto"}`)
	convWant(t, out, "input.1.content", agentA1)
	convWant(t, out, "input.2.call_id", "toolu_Qm2v8ZP1tUeXk3LqS0aHrB7d")
	convWant(t, out, "input.3.arguments", `{"command":"go test ./translate/","timeout_seconds":120}`)
	convWant(t, out, "input.7.type", "function_call_output")
	convWant(t, out, "input.7.call_id", "toolu_Xc4Jd9Hs2Rk6Wq1Nz8Ep3Tv5")
	convWant(t, out, "tools.3.name", "search_code")
	convWant(t, out, "tool_choice", "auto")
	convWant(t, out, "max_output_tokens", "2048")
	convWant(t, out, "temperature", "0.7")
	convWant(t, out, "user", "user-4821")
	convWant(t, out, "store", "false")
	convAbsent(t, out, "top_k", "stop", "stop_sequences", "thinking", "system", "stream", "metadata", "parallel_tool_calls")
}

func TestResponsesWriterLimits(t *testing.T) {
	body := `{"model":"claude","max_tokens":5,"messages":[
		{"role":"user","content":[{"type":"text","text":"draw"}]},
		{"role":"assistant","content":[{"type":"text","text":"Calling."},{"type":"tool_use","id":"toolu_9","name":"render","input":{"w":2}},{"type":"text","text":"Done."}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"text","text":"ok"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}]}]}
	],"tools":[{"name":"render","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}}`
	out, err := translateRequest(Messages, Responses, []byte(body), "gpt", false)
	if err != nil {
		t.Fatal(err)
	}
	// The responses shape rejects max_output_tokens below 16.
	convWant(t, out, "max_output_tokens", "16")
	convWant(t, out, "input.#.type", `["message","message","function_call","message","function_call_output"]`)
	convWant(t, out, "input.3.content", "Done.")
	convWant(t, out, "input.4.output", `[{"type":"input_text","text":"ok"},{"type":"input_image","image_url":"data:image/jpeg;base64,/9j/","detail":"auto"}]`)
	convWant(t, out, "tool_choice", "required")
}
