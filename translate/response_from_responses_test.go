package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestReadResponsesReply(t *testing.T) {
	r, err := readResponsesReply(gjson.ParseBytes(convFixture(t, "responses_response_text.json")))
	if err != nil {
		t.Fatal(err)
	}
	if r.created != 1768560502 || r.finish != "stop" || len(r.items) != 1 || r.items[0].call {
		t.Errorf("reply %+v", r)
	}
	if r.usage != (tokenUsage{input: 12033, output: 44, cached: 11904, known: true}) {
		t.Errorf("usage %+v", r.usage)
	}
	r, err = readResponsesReply(gjson.ParseBytes(convFixture(t, "responses_response_tool.json")))
	if err != nil {
		t.Fatal(err)
	}
	if r.finish != "tool_calls" || r.items[0].id != "call_CJSaa2u51JG996575oVljuNq" || r.items[0].name != "add" {
		t.Errorf("reply %+v", r)
	}
}

func TestReadResponsesReplyRefusal(t *testing.T) {
	r, err := readResponsesReply(gjson.Parse(`{"id":"resp_2","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res := r.result(); res.Text != "No." || res.FinishReason != "content_filter" {
		t.Errorf("result %+v", res)
	}
}

func TestReadResponsesReplyRejectsOtherBodies(t *testing.T) {
	if _, err := readResponsesReply(gjson.Parse(`{"error":{"message":"bad","type":"invalid_request_error"}}`)); err == nil {
		t.Error("an error body read as a response")
	}
}
