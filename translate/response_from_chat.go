package translate

import (
	"errors"

	"github.com/tidwall/gjson"
)

// readChatReply reads a chat.completion body. Only the first choice is read:
// the gateway never asks another dialect's client for more than one.
func readChatReply(root gjson.Result) (reply, error) {
	choices := root.Get("choices")
	if !choices.IsArray() {
		return reply{}, errors.New("upstream response is not a chat.completion")
	}
	r := reply{id: root.Get("id").Str, model: root.Get("model").Str, created: root.Get("created").Int()}
	choice := choices.Get("0")
	msg := choice.Get("message")
	content := msg.Get("content")
	r.addText(textParts(content))
	if len(r.items) == 0 {
		r.addText(msg.Get("refusal").Str)
	}
	eachElement(msg.Get("tool_calls"), func(tc gjson.Result) bool {
		fn := tc.Get("function")
		r.items = append(r.items, replyItem{call: true, id: tc.Get("id").Str, name: fn.Get("name").Str, args: fn.Get("arguments").Str})
		return true
	})
	r.finish = choice.Get("finish_reason").Str
	r.usage = chatUsage(root.Get("usage"))
	return r, nil
}

// chatUsage reads a chat-completions usage object.
func chatUsage(u gjson.Result) tokenUsage {
	if !u.IsObject() {
		return tokenUsage{}
	}
	in, out := u.Get("prompt_tokens"), u.Get("completion_tokens")
	return tokenUsage{
		input:  in.Int(),
		output: out.Int(),
		cached: u.Get("prompt_tokens_details.cached_tokens").Int(),
		known:  in.Exists() || out.Exists(),
	}
}
