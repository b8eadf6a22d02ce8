package translate

import "strconv"

// appendChatReply writes a reply as a chat.completion body: its text as one
// message content, its tool calls as tool_calls.
func appendChatReply(dst []byte, r *reply) []byte {
	dst = append(dst, `{"id":"chatcmpl-`...)
	dst = appendJSONStringBody(dst, idSuffix(r.id))
	dst = append(dst, `","object":"chat.completion","created":`...)
	dst = strconv.AppendInt(dst, createdOr(r.created), 10)
	dst = appendStringField(dst, "model", r.model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	texts := 0
	for i := range r.items {
		if !r.items[i].call {
			texts++
		}
	}
	if texts == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '"')
		for i := range r.items {
			if !r.items[i].call {
				dst = appendJSONStringBody(dst, r.items[i].text)
			}
		}
		dst = append(dst, '"')
	}
	if r.calledTools() {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range r.items {
			if it := &r.items[i]; it.call {
				dst = appendSep(dst)
				dst = append(dst, `{"id":`...)
				dst = AppendJSONString(dst, it.id)
				dst = append(dst, `,"type":"function","function":{"name":`...)
				dst = AppendJSONString(dst, it.name)
				dst = append(dst, `,"arguments":`...)
				dst = AppendJSONString(dst, it.args)
				dst = append(dst, "}}"...)
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `},"logprobs":null,"finish_reason":`...)
	if r.finish == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendJSONString(dst, r.finish)
	}
	dst = append(dst, `}],"usage":`...)
	dst = appendChatUsage(dst, r.usage)
	return append(dst, '}')
}

// appendChatUsage writes a chat-completions usage object. The contract
// requires one; unknown counts are written as zero, and the gateway, which
// reads the upstream's usage itself, still reports the cost as unknown.
func appendChatUsage(dst []byte, u tokenUsage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, u.input, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, u.output, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.input+u.output, 10)
	if u.cached > 0 {
		dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
		dst = strconv.AppendInt(dst, u.cached, 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
