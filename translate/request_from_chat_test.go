package translate

import (
	"errors"
	"testing"

	"github.com/tidwall/gjson"
)

func TestChatConversation(t *testing.T) {
	c, err := chatConversation(gjson.ParseBytes(convFixture(t, "chat_request_agent.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.system) != 2 || c.system[1] != agentDev {
		t.Errorf("system %q", c.system)
	}
	// user, assistant, user (two results), assistant, user (one result),
	// assistant, user.
	roles := []convRole{roleUser, roleAssistant, roleUser, roleAssistant, roleUser, roleAssistant, roleUser}
	if len(c.turns) != len(roles) {
		t.Fatalf("%d turns", len(c.turns))
	}
	for i, r := range roles {
		if c.turns[i].role != r {
			t.Errorf("turn %d role %d", i, c.turns[i].role)
		}
	}
	if p := c.turns[0].parts[1]; p.kind != partImage || p.detail != "high" || p.url != "data:image/png;base64,"+agentPNG {
		t.Errorf("image part %+v", p)
	}
	if p := c.turns[2].parts[1]; p.kind != partToolResult || p.id != "call_7YpTz3WnK1cR5sVbE2xLgH0u" || len(p.content) != 1 {
		t.Errorf("tool result %+v", p)
	}
	if c.maxTokens != 2048 || c.choice != choiceAuto || c.parallel != switchOn || c.user != "user-4821" || len(c.stop) != 1 {
		t.Errorf("parameters %+v", c)
	}
}

func TestChatConversationMaxCompletionTokens(t *testing.T) {
	c, err := chatConversation(gjson.Parse(`{"messages":[{"role":"user","content":"x"}],"max_tokens":10,"max_completion_tokens":20,"stop":"END"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.maxTokens != 20 || len(c.stop) != 1 || c.stop[0] != "END" {
		t.Errorf("max %d stop %q", c.maxTokens, c.stop)
	}
}

func TestChatConversationRejects(t *testing.T) {
	for body, param := range map[string]string{
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio","input_audio":{"data":"","format":"wav"}}]}]}`: "messages[0].content[1].type",
		`{"messages":[{"role":"function","name":"f","content":"x"}]}`:                                                                           "messages[0].role",
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"grammar"}}]}`:                                  "tools[0].type",
	} {
		_, err := chatConversation(gjson.Parse(body))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Param != param {
			t.Errorf("%s: error %v, want param %s", body, err, param)
		}
	}
}
