package translate

import (
	"errors"

	"github.com/tidwall/gjson"
)

// readResponsesReply reads a responses-shape response body. Reasoning items
// and hosted-tool calls are not part of what the other dialects can show.
func readResponsesReply(root gjson.Result) (reply, error) {
	output := root.Get("output")
	if !output.IsArray() {
		return reply{}, errors.New("upstream response is not a response object")
	}
	r := reply{id: root.Get("id").Str, model: root.Get("model").Str, created: root.Get("created_at").Int()}
	eachElement(output, func(item gjson.Result) bool {
		switch item.Get("type").Str {
		case "message":
			eachElement(item.Get("content"), func(p gjson.Result) bool {
				switch p.Get("type").Str {
				case "output_text":
					r.addText(p.Get("text").Str)
				case "refusal":
					r.addText(p.Get("refusal").Str)
				}
				return true
			})
		case "function_call":
			r.items = append(r.items, replyItem{call: true, id: item.Get("call_id").Str, name: item.Get("name").Str, args: item.Get("arguments").Str})
		}
		return true
	})
	r.finish = chatFinishFromResponses(root.Get("status").Str, root.Get("incomplete_details.reason").Str, r.calledTools())
	r.usage = responsesUsage(root.Get("usage"))
	return r, nil
}

// responsesUsage reads a responses-shape usage object.
func responsesUsage(u gjson.Result) tokenUsage {
	if !u.IsObject() {
		return tokenUsage{}
	}
	in, out := u.Get("input_tokens"), u.Get("output_tokens")
	return tokenUsage{
		input:  in.Int(),
		output: out.Int(),
		cached: u.Get("input_tokens_details.cached_tokens").Int(),
		known:  in.Exists() || out.Exists(),
	}
}
