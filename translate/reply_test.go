package translate

import "testing"

func TestReplyResult(t *testing.T) {
	var r reply
	r.addText("Let me ")
	r.addText("check.")
	r.items = append(r.items, replyItem{call: true, id: "c1", name: "f", args: "{}"})
	r.addText("")
	r.addText("Done.")
	r.finish = "tool_calls"
	res := r.result()
	if len(r.items) != 3 || res.Text != "Let me check.Done." || len(res.ToolCalls) != 1 || res.ToolCalls[0].ID != "c1" || !r.calledTools() {
		t.Errorf("items %+v result %+v", r.items, res)
	}
	if u := (tokenUsage{input: 9, output: 2, cached: 1, cacheWrite: 3, cacheWrite1h: 4, known: true}).usage(); u != (Usage{InputTokens: 9, OutputTokens: 2,
		CacheReadTokens: 1, CacheWriteTokens: 3, CacheWrite1hTokens: 4, Known: true}) {
		t.Errorf("usage %+v", u)
	}
}

func TestIDSuffix(t *testing.T) {
	for in, want := range map[string]string{"chatcmpl-abc": "abc", "msg_01X": "01X", "resp_9": "9", "gen-77": "gen-77", "": ""} {
		if got := idSuffix(in); got != want {
			t.Errorf("%q -> %q", in, got)
		}
	}
	if createdOr(42) != 42 || createdOr(0) <= 0 {
		t.Error("createdOr")
	}
}
