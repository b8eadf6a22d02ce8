package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestReadChatReply(t *testing.T) {
	r, err := readChatReply(gjson.ParseBytes(convFixture(t, "chat_response_tool.json")))
	if err != nil {
		t.Fatal(err)
	}
	if r.id != "chatcmpl-BwkyFElDIr1egmFyfQ9z4vPBto7m2" || r.created != 1753343279 || r.finish != "tool_calls" {
		t.Errorf("reply %+v", r)
	}
	if len(r.items) != 1 || !r.items[0].call || r.items[0].args != `{"path":"README.md"}` {
		t.Errorf("items %+v", r.items)
	}
	if r.usage != (tokenUsage{input: 60, output: 15, known: true}) {
		t.Errorf("usage %+v", r.usage)
	}
}

func TestReadChatReplyRefusal(t *testing.T) {
	r, err := readChatReply(gjson.Parse(`{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res := r.result(); res.Text != "I can't help with that." || r.usage.known {
		t.Errorf("result %+v usage %+v", res, r.usage)
	}
}

func TestReadChatReplyRejectsOtherBodies(t *testing.T) {
	if _, err := readChatReply(gjson.Parse(`{"error":{"message":"overloaded","type":"server_error"}}`)); err == nil {
		t.Error("an error body read as a completion")
	}
}
