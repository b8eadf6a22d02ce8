package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// appendChatRequest writes a conversation as a chat-completions request for
// model. The system prompt becomes one leading system message; tool results
// become tool messages ahead of the rest of their user turn. A streamed call
// always asks for the usage chunk so that it can be metered.
func appendChatRequest(dst []byte, c *conversation, model string, stream bool) []byte {
	dst = append(dst, '{')
	dst = appendStringField(dst, "model", model)
	dst = append(dst, `,"messages":[`...)
	if sys := c.systemText(); sys != "" {
		dst = append(dst, `{"role":"system","content":`...)
		dst = AppendJSONString(dst, sys)
		dst = append(dst, '}')
	}
	for i := range c.turns {
		if c.turns[i].role == roleAssistant {
			dst = appendChatAssistant(dst, &c.turns[i])
		} else {
			dst = appendChatUser(dst, &c.turns[i])
		}
	}
	dst = append(dst, ']')
	if len(c.tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range c.tools {
			t := &c.tools[i]
			dst = appendSep(dst)
			dst = append(dst, `{"type":"function","function":{`...)
			dst = appendStringField(dst, "name", t.name)
			if t.description != "" {
				dst = appendStringField(dst, "description", t.description)
			}
			if t.schema.IsObject() {
				dst = appendCompactJSON(appendKey(dst, "parameters"), t.schema.Raw)
			}
			if t.strict.Type == gjson.True {
				dst = append(dst, `,"strict":true`...)
			}
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
		switch c.choice {
		case choiceAuto:
			dst = append(dst, `,"tool_choice":"auto"`...)
		case choiceNone:
			dst = append(dst, `,"tool_choice":"none"`...)
		case choiceRequired:
			dst = append(dst, `,"tool_choice":"required"`...)
		case choiceTool:
			dst = append(dst, `,"tool_choice":{"type":"function","function":{"name":`...)
			dst = AppendJSONString(dst, c.choiceName)
			dst = append(dst, "}}"...)
		}
		// OpenAI rejects parallel_tool_calls on a request without tools.
		switch c.parallel {
		case switchOn:
			dst = append(dst, `,"parallel_tool_calls":true`...)
		case switchOff:
			dst = append(dst, `,"parallel_tool_calls":false`...)
		}
	}
	if c.maxTokens > 0 {
		// max_completion_tokens is the current name; reasoning models reject
		// max_tokens, and compatible servers that predate it ignore it.
		dst = strconv.AppendInt(appendKey(dst, "max_completion_tokens"), c.maxTokens, 10)
	}
	dst = appendSampling(dst, c, false)
	if len(c.stop) > 0 {
		dst = appendStringArray(appendKey(dst, "stop"), c.stop)
	}
	if c.user != "" {
		dst = appendStringField(dst, "user", c.user)
	}
	dst = appendOpenAIMetadata(dst, c.metadata)
	switch c.store {
	case switchOn:
		dst = append(dst, `,"store":true`...)
	case switchOff:
		dst = append(dst, `,"store":false`...)
	}
	if c.effort != "" {
		dst = appendStringField(dst, "reasoning_effort", c.effort)
	}
	switch c.format.typ {
	case "json_object", "text":
		dst = append(dst, `,"response_format":{"type":`...)
		dst = AppendJSONString(dst, c.format.typ)
		dst = append(dst, '}')
	case "json_schema":
		dst = append(dst, `,"response_format":{"type":"json_schema","json_schema":{`...)
		dst = appendFormatSchema(dst, &c.format)
		dst = append(dst, "}}"...)
	}
	if stream {
		dst = append(dst, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(dst, '}')
}

// appendChatUser writes a user turn: its tool results as tool messages, then
// the rest as one user message. Chat tool messages carry text only, so images
// returned by a tool follow in that user message.
func appendChatUser(dst []byte, t *convTurn) []byte {
	var extra []*convPart
	for i := range t.parts {
		p := &t.parts[i]
		if p.kind != partToolResult {
			continue
		}
		dst = appendSep(dst)
		dst = append(dst, `{"role":"tool","tool_call_id":`...)
		dst = AppendJSONString(dst, p.id)
		dst = append(dst, `,"content":`...)
		dst = appendChatText(dst, p.content)
		dst = append(dst, '}')
		for j := range p.content {
			if p.content[j].kind == partImage {
				extra = append(extra, &p.content[j])
			}
		}
	}
	var rest []*convPart
	for i := range t.parts {
		if k := t.parts[i].kind; k == partText || k == partImage {
			rest = append(rest, &t.parts[i])
		}
	}
	rest = append(rest, extra...)
	if len(rest) == 0 {
		return dst
	}
	dst = appendSep(dst)
	dst = append(dst, `{"role":"user","content":`...)
	if len(rest) == 1 && rest[0].kind == partText {
		dst = AppendJSONString(dst, rest[0].text)
		return append(dst, '}')
	}
	dst = append(dst, '[')
	for _, p := range rest {
		dst = appendSep(dst)
		if p.kind == partText {
			dst = append(dst, `{"type":"text","text":`...)
			dst = AppendJSONString(dst, p.text)
			dst = append(dst, '}')
			continue
		}
		dst = append(dst, `{"type":"image_url","image_url":{"url":`...)
		dst = appendImageURL(dst, p)
		if p.detail != "" {
			dst = appendStringField(dst, "detail", p.detail)
		}
		dst = append(dst, "}}"...)
	}
	return append(dst, "]}"...)
}

// appendChatText writes the text of a tool result as a chat content value: a
// string, or an array of text parts when the result had several.
func appendChatText(dst []byte, parts []convPart) []byte {
	n := 0
	for i := range parts {
		if parts[i].kind == partText {
			n++
		}
	}
	if n <= 1 {
		for i := range parts {
			if parts[i].kind == partText {
				return AppendJSONString(dst, parts[i].text)
			}
		}
		return append(dst, `""`...)
	}
	dst = append(dst, '[')
	for i := range parts {
		if parts[i].kind == partText {
			dst = appendSep(dst)
			dst = append(dst, `{"type":"text","text":`...)
			dst = AppendJSONString(dst, parts[i].text)
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// appendChatAssistant writes an assistant turn: its text as content (null when
// there is none) and its tool calls.
func appendChatAssistant(dst []byte, t *convTurn) []byte {
	dst = appendSep(dst)
	dst = append(dst, `{"role":"assistant","content":`...)
	texts, calls := 0, 0
	for i := range t.parts {
		switch t.parts[i].kind {
		case partText:
			texts++
		case partToolCall:
			calls++
		}
	}
	if texts == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '"')
		for i := range t.parts {
			if t.parts[i].kind == partText {
				dst = appendJSONStringBody(dst, t.parts[i].text)
			}
		}
		dst = append(dst, '"')
	}
	if calls > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range t.parts {
			p := &t.parts[i]
			if p.kind != partToolCall {
				continue
			}
			dst = appendSep(dst)
			dst = append(dst, `{"id":`...)
			dst = AppendJSONString(dst, p.id)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = AppendJSONString(dst, p.name)
			dst = append(dst, `,"arguments":`...)
			dst = AppendJSONString(dst, p.text)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendSampling writes temperature and top_p when the client gave them as
// numbers. For a messages upstream (toMessages) temperature is clamped to
// 0..1, the shape's range where the OpenAI shapes allow up to 2, and top_p is
// left out when temperature is set: current models of that shape reject
// requests that set both.
func appendSampling(dst []byte, c *conversation, toMessages bool) []byte {
	if t := c.temperature; isNumber(t) {
		dst = appendKey(dst, "temperature")
		switch v := t.Float(); {
		case toMessages && v > 1:
			dst = append(dst, '1')
		case v < 0:
			dst = append(dst, '0')
		default:
			dst = append(dst, t.Raw...)
		}
	}
	if p := c.topP; isNumber(p) && !(toMessages && isNumber(c.temperature)) {
		dst = append(appendKey(dst, "top_p"), p.Raw...)
	}
	return dst
}

// appendStringArray writes a JSON array of strings.
func appendStringArray(dst []byte, values []string) []byte {
	dst = append(dst, '[')
	for _, v := range values {
		dst = AppendJSONString(appendSep(dst), v)
	}
	return append(dst, ']')
}

// appendOpenAIMetadata writes the client's metadata map without the gateway's
// operation_id, and nothing when no other key is left.
func appendOpenAIMetadata(dst []byte, md gjson.Result) []byte {
	if !md.IsObject() {
		return dst
	}
	mark := len(dst)
	dst = append(appendKey(dst, "metadata"), '{')
	open := len(dst)
	md.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "operation_id" || v.Type != gjson.String {
			return true
		}
		dst = AppendJSONString(appendSep(dst), k.Str)
		dst = AppendJSONString(append(dst, ':'), v.Str)
		return true
	})
	if len(dst) == open {
		return dst[:mark]
	}
	return append(dst, '}')
}

// appendFormatSchema writes the members of a json_schema structured-output
// request, which the chat shape nests under json_schema and the responses
// shape places in text.format itself.
func appendFormatSchema(dst []byte, f *convFormat) []byte {
	dst = appendStringField(dst, "name", f.name)
	if f.description != "" {
		dst = appendStringField(dst, "description", f.description)
	}
	if f.schema.IsObject() {
		dst = appendCompactJSON(appendKey(dst, "schema"), f.schema.Raw)
	}
	switch f.strict.Type {
	case gjson.True:
		dst = append(dst, `,"strict":true`...)
	case gjson.False:
		dst = append(dst, `,"strict":false`...)
	}
	return dst
}
