package translate

import "strconv"

// appendMessagesReply writes a reply as a messages-shape message body: text
// blocks and tool_use blocks in the order the assistant produced them.
func appendMessagesReply(dst []byte, r *reply) []byte {
	dst = append(dst, `{"id":"msg_`...)
	dst = appendJSONStringBody(dst, idSuffix(r.id))
	dst = append(dst, `","type":"message","role":"assistant"`...)
	dst = appendStringField(dst, "model", r.model)
	dst = append(dst, `,"content":[`...)
	for i := range r.items {
		it := &r.items[i]
		dst = appendSep(dst)
		if !it.call {
			dst = append(dst, `{"type":"text","text":`...)
			dst = AppendJSONString(dst, it.text)
			dst = append(dst, '}')
			continue
		}
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = AppendJSONString(dst, anthropicToolID(it.id))
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, it.name)
		dst = append(dst, `,"input":`...)
		dst = appendToolInput(dst, it.args)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"stop_reason":`...)
	dst = AppendJSONString(dst, anthropicStopFromChat(r.finish))
	dst = append(dst, `,"stop_sequence":null,"usage":`...)
	dst = appendAnthropicUsage(dst, r.usage)
	return append(dst, '}')
}

// appendAnthropicUsage writes a messages-shape usage object: input_tokens
// without the cached prompt tokens, which go in cache_read_input_tokens.
func appendAnthropicUsage(dst []byte, u tokenUsage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, max(u.input-u.cached, 0), 10)
	if u.cached > 0 {
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = strconv.AppendInt(dst, u.cached, 10)
	}
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.output, 10)
	return append(dst, '}')
}
