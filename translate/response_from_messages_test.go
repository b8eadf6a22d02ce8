package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestReadMessagesReply(t *testing.T) {
	r, err := readMessagesReply(gjson.ParseBytes(convFixture(t, "messages_response_tools.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.items) != 2 || r.items[0].call || !r.items[1].call || r.items[1].args != `{"query":"Detroit Tigers game schedule today"}` {
		t.Errorf("items %+v", r.items)
	}
	if r.finish != "tool_calls" || r.usage != (tokenUsage{input: 446, output: 84, known: true}) {
		t.Errorf("finish %q usage %+v", r.finish, r.usage)
	}
}

func TestReadMessagesReplyThinkingAndCache(t *testing.T) {
	r, err := readMessagesReply(gjson.Parse(`{"id":"msg_1","type":"message","content":[
		{"type":"thinking","thinking":"let me see","signature":"abc"},
		{"type":"text","text":"Four"},{"type":"text","text":"."}],
		"stop_reason":"refusal","usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if res := r.result(); res.Text != "Four." || res.FinishReason != "content_filter" {
		t.Errorf("result %+v", res)
	}
	if r.usage != (tokenUsage{input: 2105, output: 3, cached: 2000, cacheWrite: 100, known: true}) {
		t.Errorf("usage %+v", r.usage)
	}
}

func TestReadMessagesReplyRejectsOtherBodies(t *testing.T) {
	if _, err := readMessagesReply(gjson.Parse(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)); err == nil {
		t.Error("an error body read as a message")
	}
}
