package translate

import (
	"errors"

	"github.com/tidwall/gjson"
)

// readMessagesReply reads a messages-shape message body. Thinking blocks and
// server-tool blocks are not part of what the other dialects can show.
func readMessagesReply(root gjson.Result) (reply, error) {
	content := root.Get("content")
	if !content.IsArray() {
		return reply{}, errors.New("upstream response is not a message")
	}
	r := reply{id: root.Get("id").Str, model: root.Get("model").Str}
	eachElement(content, func(b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			r.addText(b.Get("text").Str)
		case "tool_use":
			r.items = append(r.items, replyItem{call: true, id: b.Get("id").Str, name: b.Get("name").Str, args: toolInputArguments(b.Get("input"))})
		}
		return true
	})
	r.finish = chatFinishFromAnthropic(root.Get("stop_reason").Str)
	r.usage = anthropicUsage(root.Get("usage"))
	return r, nil
}

// anthropicUsage reads a messages-shape usage object. Its input_tokens leaves
// out the tokens written to and read from the prompt cache; they are added
// back so that input counts every prompt token, as the OpenAI shapes do.
func anthropicUsage(u gjson.Result) tokenUsage {
	if !u.IsObject() {
		return tokenUsage{}
	}
	in, out := u.Get("input_tokens"), u.Get("output_tokens")
	cached := u.Get("cache_read_input_tokens").Int()
	written := u.Get("cache_creation_input_tokens").Int()
	// cache_creation splits the writes by cache duration; without it they
	// are all of the default (5-minute) duration.
	hour := min(max(u.Get("cache_creation.ephemeral_1h_input_tokens").Int(), 0), written)
	return tokenUsage{
		input:        in.Int() + written + cached,
		output:       out.Int(),
		cached:       cached,
		cacheWrite:   written - hour,
		cacheWrite1h: hour,
		known:        in.Exists() || out.Exists(),
	}
}
