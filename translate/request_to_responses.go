package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// minOutputTokens is the smallest max_output_tokens the responses shape
// accepts; a smaller client limit is raised to it rather than rejected.
const minOutputTokens = 16

// appendResponsesRequest writes a conversation as a responses-shape request
// for model. The system prompt becomes instructions, tool calls and results
// become function_call and function_call_output items. store is false unless
// the client asked for it: the other shapes never keep an exchange, and the
// responses shape would by default. Function tools are sent with an explicit
// strict flag because the responses shape defaults to strict schemas, which
// most chat and messages tool schemas do not satisfy. Stop sequences and
// top_k have no counterpart and are not sent.
func appendResponsesRequest(dst []byte, c *conversation, model string, stream bool) []byte {
	dst = append(dst, '{')
	dst = appendStringField(dst, "model", model)
	if sys := c.systemText(); sys != "" {
		dst = appendStringField(dst, "instructions", sys)
	}
	dst = append(dst, `,"input":[`...)
	for i := range c.turns {
		t := &c.turns[i]
		if t.role == roleAssistant {
			dst = appendResponsesAssistant(dst, t)
		} else {
			dst = appendResponsesUser(dst, t)
		}
	}
	dst = append(dst, ']')
	if len(c.tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range c.tools {
			t := &c.tools[i]
			dst = appendSep(dst)
			dst = append(dst, `{"type":"function"`...)
			dst = appendStringField(dst, "name", t.name)
			if t.description != "" {
				dst = appendStringField(dst, "description", t.description)
			}
			dst = appendKey(dst, "parameters")
			if t.schema.IsObject() {
				dst = appendCompactJSON(dst, t.schema.Raw)
			} else {
				dst = append(dst, `{"type":"object","properties":{}}`...)
			}
			if t.strict.Type == gjson.True {
				dst = append(dst, `,"strict":true}`...)
			} else {
				dst = append(dst, `,"strict":false}`...)
			}
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
			dst = append(dst, `,"tool_choice":{"type":"function","name":`...)
			dst = AppendJSONString(dst, c.choiceName)
			dst = append(dst, '}')
		}
		switch c.parallel {
		case switchOn:
			dst = append(dst, `,"parallel_tool_calls":true`...)
		case switchOff:
			dst = append(dst, `,"parallel_tool_calls":false`...)
		}
	}
	if c.maxTokens > 0 {
		dst = strconv.AppendInt(appendKey(dst, "max_output_tokens"), max(c.maxTokens, minOutputTokens), 10)
	}
	dst = appendSampling(dst, c, false)
	if c.user != "" {
		dst = appendStringField(dst, "user", c.user)
	}
	dst = appendOpenAIMetadata(dst, c.metadata)
	if c.store == switchOn {
		dst = append(dst, `,"store":true`...)
	} else {
		dst = append(dst, `,"store":false`...)
	}
	if c.effort != "" {
		dst = append(dst, `,"reasoning":{"effort":`...)
		dst = AppendJSONString(dst, c.effort)
		dst = append(dst, '}')
	}
	switch c.format.typ {
	case "json_object", "text":
		dst = append(dst, `,"text":{"format":{"type":`...)
		dst = AppendJSONString(dst, c.format.typ)
		dst = append(dst, "}}"...)
	case "json_schema":
		dst = append(dst, `,"text":{"format":{"type":"json_schema"`...)
		dst = appendFormatSchema(dst, &c.format)
		dst = append(dst, "}}"...)
	}
	if stream {
		dst = append(dst, `,"stream":true`...)
	}
	return append(dst, '}')
}

// appendResponsesUser writes a user turn: function_call_output items for its
// tool results, then one user message with the rest.
func appendResponsesUser(dst []byte, t *convTurn) []byte {
	rest := 0
	for i := range t.parts {
		p := &t.parts[i]
		if p.kind != partToolResult {
			rest++
			continue
		}
		dst = appendSep(dst)
		dst = append(dst, `{"type":"function_call_output","call_id":`...)
		dst = AppendJSONString(dst, p.id)
		dst = append(dst, `,"output":`...)
		dst = appendResponsesOutput(dst, p.content)
		dst = append(dst, '}')
	}
	if rest == 0 {
		return dst
	}
	dst = appendSep(dst)
	dst = append(dst, `{"type":"message","role":"user","content":`...)
	if rest == 1 {
		for i := range t.parts {
			if p := &t.parts[i]; p.kind == partText {
				dst = AppendJSONString(dst, p.text)
				return append(dst, '}')
			}
		}
	}
	dst = append(dst, '[')
	for i := range t.parts {
		if t.parts[i].kind != partToolResult {
			dst = appendResponsesInputPart(dst, &t.parts[i])
		}
	}
	return append(dst, "]}"...)
}

// appendResponsesOutput writes a tool result as a function_call_output
// output: a string when it is text only, a list of input parts otherwise.
func appendResponsesOutput(dst []byte, parts []convPart) []byte {
	images := false
	for i := range parts {
		images = images || parts[i].kind == partImage
	}
	if !images {
		dst = append(dst, '"')
		for i := range parts {
			dst = appendJSONStringBody(dst, parts[i].text)
		}
		return append(dst, '"')
	}
	dst = append(dst, '[')
	for i := range parts {
		dst = appendResponsesInputPart(dst, &parts[i])
	}
	return append(dst, ']')
}

// appendResponsesInputPart writes an input_text or input_image part.
func appendResponsesInputPart(dst []byte, p *convPart) []byte {
	dst = appendSep(dst)
	if p.kind == partText {
		dst = append(dst, `{"type":"input_text","text":`...)
		dst = AppendJSONString(dst, p.text)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"input_image","image_url":`...)
	dst = appendImageURL(dst, p)
	detail := p.detail
	if detail == "" {
		detail = "auto"
	}
	return append(appendStringField(dst, "detail", detail), '}')
}

// appendResponsesAssistant writes an assistant turn in order: runs of text as
// assistant messages, tool calls as function_call items.
func appendResponsesAssistant(dst []byte, t *convTurn) []byte {
	inText := false
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case partText:
			if p.text == "" {
				continue
			}
			if !inText {
				dst = appendSep(dst)
				dst = append(dst, `{"type":"message","role":"assistant","content":"`...)
				inText = true
			}
			dst = appendJSONStringBody(dst, p.text)
		case partToolCall:
			if inText {
				dst = append(dst, `"}`...)
				inText = false
			}
			dst = appendSep(dst)
			dst = append(dst, `{"type":"function_call","call_id":`...)
			dst = AppendJSONString(dst, p.id)
			dst = append(dst, `,"name":`...)
			dst = AppendJSONString(dst, p.name)
			dst = append(dst, `,"arguments":`...)
			dst = AppendJSONString(dst, p.text)
			dst = append(dst, '}')
		}
	}
	if inText {
		dst = append(dst, `"}`...)
	}
	return dst
}
