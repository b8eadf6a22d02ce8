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
// without the prompt tokens read from or written to the cache, which go in
// cache_read_input_tokens and cache_creation_input_tokens.
func appendAnthropicUsage(dst []byte, u tokenUsage) []byte {
	dst = appendAnthropicInput(append(dst, '{'), u)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.output, 10)
	return append(dst, '}')
}

// appendAnthropicInput writes the input members of a messages-shape usage
// object: input_tokens and, when there are any, the cache classes.
func appendAnthropicInput(dst []byte, u tokenUsage) []byte {
	dst = append(dst, `"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.uncached(), 10)
	if written := u.cacheWrite + u.cacheWrite1h; written > 0 {
		dst = append(dst, `,"cache_creation_input_tokens":`...)
		dst = strconv.AppendInt(dst, written, 10)
		if u.cacheWrite1h > 0 {
			dst = append(dst, `,"cache_creation":{"ephemeral_5m_input_tokens":`...)
			dst = strconv.AppendInt(dst, u.cacheWrite, 10)
			dst = append(dst, `,"ephemeral_1h_input_tokens":`...)
			dst = strconv.AppendInt(dst, u.cacheWrite1h, 10)
			dst = append(dst, '}')
		}
	}
	if u.cached > 0 {
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = strconv.AppendInt(dst, u.cached, 10)
	}
	return dst
}
