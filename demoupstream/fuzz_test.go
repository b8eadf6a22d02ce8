package demoupstream

import (
	"strings"
	"testing"
)

// FuzzReaders feeds arbitrary bodies to every request reader, strict and
// lenient, and the replies built from what they accept. None may panic, and
// every reply must keep the invariants the streams rely on.
func FuzzReaders(f *testing.F) {
	seeds := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi [[words:3]]"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"x":{"type":["string","null"]}},"required":["x"]}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],"tools":[{"type":"function","name":"f"}]}`,
		`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}],"tools":[{"name":"f","input_schema":{"properties":{"a":{"type":"object"}}}}],"tool_choice":{"type":"tool","name":"f"}}`,
		`{"model":"m","input":[[1,2],[3]],"dimensions":3,"encoding_format":"base64"}`,
		`{"model":"m","input":[{"content":[{"type":"image_url","image_url":{"url":"u"}}]}]}`,
		`{"model":"m","input":"[[cut:1]][[sleep:0]][[status:400]]\u2028\ud800"}`,
		`[]`, `{`, `null`, `{"model":1,"messages":{},"input":true}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, strict := range []bool{false, true} {
			if req, e := readChat(body, strict); e == nil {
				checkReply(t, answer(&req.turn))
			}
			if req, e := readResponses(body, strict); e == nil {
				checkReply(t, answer(&req.turn))
			}
			if tn, e := readMessages(body, strict); e == nil {
				checkReply(t, answer(tn))
			}
			if req, e := readEmbeddings(body, strict); e == nil {
				if len(req.inputs) == 0 || req.dimensions < 1 || req.dimensions > maxDimensions {
					t.Fatalf("accepted embeddings request %+v", req)
				}
			}
		}
	})
}

// checkReply asserts what the stream writers assume of a reply.
func checkReply(t *testing.T, r reply) {
	t.Helper()
	if r.call != nil {
		if r.call.name == "" || len(fragments(r.call.arguments)) < 2 || strings.Join(fragments(r.call.arguments), "") != r.call.arguments {
			t.Fatalf("bad call %+v", r.call)
		}
		return
	}
	if strings.Join(pieces(r.text), "") != r.text || normalizeSpace(r.text) != r.text {
		t.Fatalf("reply text %q does not stream back to itself", r.text)
	}
}
