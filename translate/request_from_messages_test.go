package translate

import (
	"errors"
	"testing"

	"github.com/tidwall/gjson"
)

func TestMessagesConversation(t *testing.T) {
	c, err := messagesConversation(gjson.ParseBytes(convFixture(t, "messages_request_agent.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.system) != 2 || c.system[1] != agentDev {
		t.Errorf("system %q", c.system)
	}
	if p := c.turns[0].parts[1]; p.kind != partImage || p.mediaType != "image/png" || p.data != agentPNG {
		t.Errorf("image part %+v", p)
	}
	// The thinking block is not part of the conversation.
	if a := c.turns[1]; len(a.parts) != 3 || a.parts[0].text != agentA1 || a.parts[1].text != `{"path":"go.mod"}` {
		t.Errorf("assistant turn %+v", a.parts)
	}
	if c.choice != choiceAuto || c.parallel != switchUnset || c.topK.Int() != 40 || c.user != "user-4821" {
		t.Errorf("parameters %+v", c)
	}
}

func TestMessagesConversationSystemRoleAndResultImages(t *testing.T) {
	c, err := messagesConversation(gjson.Parse(`{"system":"A","messages":[
		{"role":"system","content":"B"},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"image","source":{"type":"url","url":"https://x.test/i.png"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.systemText() != "A\n\nB" {
		t.Errorf("system %q", c.systemText())
	}
	p := c.turns[0].parts[0]
	if !p.isError || len(p.content) != 1 || p.content[0].url != "https://x.test/i.png" {
		t.Errorf("tool result %+v", p)
	}
}

func TestMessagesConversationRejects(t *testing.T) {
	for body, param := range map[string]string{
		`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":""}}]}]}`:    "messages[0].content[0].type",
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`:         "messages[0].content[1].source.type",
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result","source":"s"}]}]}]}`: "messages[0].content[0].content[0].type",
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`:                             "tools[0].type",
		`{"messages":[{"role":"robot","content":"x"}]}`: "messages[0].role",
	} {
		_, err := messagesConversation(gjson.Parse(body))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Param != param {
			t.Errorf("%s: error %v, want param %s", body, err, param)
		}
	}
}

func TestToolInputArguments(t *testing.T) {
	for in, want := range map[string]string{
		`{"input":{ "a" : [1, 2] }}`: `{"a":[1,2]}`,
		`{"input":"text"}`:           "{}",
		`{}`:                         "{}",
	} {
		if got := toolInputArguments(gjson.Get(in, "input")); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}
