package translate

import (
	"errors"
	"testing"

	"github.com/tidwall/gjson"
)

func TestResponsesConversation(t *testing.T) {
	c, err := responsesConversation(gjson.ParseBytes(convFixture(t, "responses_request_agent.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.system) != 2 || c.system[1] != agentDev {
		t.Errorf("system %q", c.system)
	}
	// The assistant message and the two function_call items after it form
	// one assistant turn.
	if a := c.turns[1]; a.role != roleAssistant || len(a.parts) != 3 || a.parts[2].id != "call_7YpTz3WnK1cR5sVbE2xLgH0u" {
		t.Errorf("assistant turn %+v", a)
	}
	if c.choice != choiceTool || c.choiceName != "run_command" || c.parallel != switchOff || c.store != switchOn || c.effort != "low" {
		t.Errorf("parameters %+v", c)
	}
	if c.format.typ != "json_schema" || c.format.name != "fix" || c.format.strict.Type != gjson.True {
		t.Errorf("format %+v", c.format)
	}
}

func TestResponsesConversationStringInput(t *testing.T) {
	c, err := responsesConversation(gjson.Parse(`{"input":"tell me a joke","instructions":"Be brief.","safety_identifier":"u-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.turns) != 1 || c.turns[0].parts[0].text != "tell me a joke" || c.systemText() != "Be brief." || c.user != "u-1" {
		t.Errorf("conversation %+v", c)
	}
}

func TestResponsesConversationRejects(t *testing.T) {
	for body, param := range map[string]string{
		`{"input":"x","previous_response_id":"resp_1"}`:                                                                "previous_response_id",
		`{"input":"x","conversation":"conv_1"}`:                                                                        "conversation",
		`{"input":[{"type":"item_reference","id":"msg_1"}]}`:                                                           "input[0].type",
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_file","file_id":"f"}]}]}`: "input[0].content[1].type",
		`{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1","detail":"auto"}]}]}`:            "input[0].content[0].type",
		`{"input":"x","tools":[{"type":"web_search"}]}`:                                                                "tools[0].type",
	} {
		_, err := responsesConversation(gjson.Parse(body))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Param != param {
			t.Errorf("%s: error %v, want param %s", body, err, param)
		}
	}
	if _, err := responsesConversation(gjson.Parse(`{"input":"x","previous_response_id":null}`)); err != nil {
		t.Errorf("a null previous_response_id: %v", err)
	}
}
