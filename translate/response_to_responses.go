package translate

import "strconv"

// appendResponsesReply writes a reply as a responses-shape response body:
// each run of text as an assistant message item, each tool call as a
// function_call item, with the status the finish reason implies.
func appendResponsesReply(dst []byte, r *reply) []byte {
	suffix := idSuffix(r.id)
	dst = append(dst, `{"id":"resp_`...)
	dst = appendJSONStringBody(dst, suffix)
	dst = append(dst, `","object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, createdOr(r.created), 10)
	status, reason := responsesStatusFromChat(r.finish)
	dst = appendStringField(dst, "status", status)
	dst = append(dst, `,"error":null`...)
	dst = appendIncompleteDetails(dst, reason)
	dst = appendStringField(dst, "model", r.model)
	dst = append(dst, `,"output":[`...)
	for i := range r.items {
		it := &r.items[i]
		dst = appendSep(dst)
		if it.call {
			dst = appendFunctionCallItem(dst, suffix, i, "completed", it.id, it.name, it.args)
		} else {
			dst = appendMessageItem(dst, suffix, i, "completed", it.text)
		}
	}
	dst = append(dst, `],"usage":`...)
	dst = appendResponsesUsage(dst, r.usage)
	return append(dst, '}')
}

// appendIncompleteDetails writes incomplete_details: null, or the reason a
// response is incomplete.
func appendIncompleteDetails(dst []byte, reason string) []byte {
	if reason == "" {
		return append(dst, `,"incomplete_details":null`...)
	}
	dst = append(dst, `,"incomplete_details":{"reason":`...)
	dst = AppendJSONString(dst, reason)
	return append(dst, '}')
}

// appendItemID writes the id of the output item at index under prefix ("msg"
// or "fc"), derived from the response id so that it is stable and unique.
func appendItemID(dst []byte, prefix, suffix string, index int) []byte {
	dst = append(dst, '"')
	dst = append(dst, prefix...)
	dst = append(dst, '_')
	dst = appendJSONStringBody(dst, suffix)
	dst = append(dst, '_')
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '"')
}

// appendMessageItem writes an assistant message output item holding text.
func appendMessageItem(dst []byte, suffix string, index int, status, text string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendItemID(dst, "msg", suffix, index)
	dst = append(dst, `,"type":"message","status":`...)
	dst = AppendJSONString(dst, status)
	dst = append(dst, `,"role":"assistant","content":[`...)
	if status == "completed" {
		dst = append(dst, `{"type":"output_text","annotations":[],"text":`...)
		dst = AppendJSONString(dst, text)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// appendFunctionCallItem writes a function_call output item.
func appendFunctionCallItem(dst []byte, suffix string, index int, status, callID, name, args string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendItemID(dst, "fc", suffix, index)
	dst = append(dst, `,"type":"function_call","status":`...)
	dst = AppendJSONString(dst, status)
	dst = append(dst, `,"arguments":`...)
	dst = AppendJSONString(dst, args)
	dst = append(dst, `,"call_id":`...)
	dst = AppendJSONString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = AppendJSONString(dst, name)
	return append(dst, '}')
}

// appendResponsesUsage writes a responses-shape usage object, or null when
// the upstream reported none.
func appendResponsesUsage(dst []byte, u tokenUsage) []byte {
	if !u.known {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.input, 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.cached, 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.output, 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.input+u.output, 10)
	return append(dst, '}')
}
