package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestConversationAddMergesRoles(t *testing.T) {
	var c conversation
	c.add(roleUser, convPart{kind: partText, text: "a"})
	c.add(roleUser, convPart{kind: partToolResult, id: "t"})
	c.add(roleAssistant, convPart{kind: partText, text: "b"})
	c.add(roleUser, convPart{kind: partText, text: "c"})
	if len(c.turns) != 3 || len(c.turns[0].parts) != 2 || c.turns[0].parts[1].kind != partToolResult || c.turns[2].role != roleUser {
		t.Errorf("turns %+v", c.turns)
	}
}

func TestConversationSystemText(t *testing.T) {
	c := conversation{}
	if c.systemText() != "" {
		t.Error("empty system")
	}
	c.system = []string{"one"}
	if c.systemText() != "one" {
		t.Error("single system")
	}
	c.system = append(c.system, "two")
	if c.systemText() != "one\n\ntwo" {
		t.Errorf("joined %q", c.systemText())
	}
}

func TestSwitchOf(t *testing.T) {
	for raw, want := range map[string]convSwitch{`{"v":true}`: switchOn, `{"v":false}`: switchOff, `{"v":"true"}`: switchUnset, `{}`: switchUnset} {
		if got := switchOf(gjson.Get(raw, "v")); got != want {
			t.Errorf("%s: %d", raw, got)
		}
	}
}
