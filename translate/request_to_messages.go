package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// defaultMaxTokens is sent when the client set no limit: the messages shape
// requires max_tokens, and the OpenAI shapes let the model run to its own.
const defaultMaxTokens = 4096

// appendMessagesRequest writes a conversation as a messages-shape request for
// model. The upstream rejects what the OpenAI shapes allow in several places,
// so this writer also repairs: temperature is clamped to 0..1 (and top_p
// left out beside it), empty text
// blocks and empty messages are left out (and the turns around them merged,
// since roles must alternate), tool results lead their user message,
// whitespace-only stop sequences are dropped, and tool-call arguments that
// are not a JSON object become an empty input.
func appendMessagesRequest(dst []byte, c *conversation, model string, stream bool) []byte {
	dst = append(dst, '{')
	dst = appendStringField(dst, "model", model)
	maxTokens := c.maxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	dst = strconv.AppendInt(appendKey(dst, "max_tokens"), maxTokens, 10)
	if sys := c.systemText(); sys != "" {
		dst = appendStringField(dst, "system", sys)
	}
	dst = append(dst, `,"messages":[`...)
	var last convRole
	for i := range c.turns {
		t := &c.turns[i]
		if !t.hasAnthropicContent() {
			continue
		}
		if t.role == last {
			// Reopen the previous message's content array to merge into it.
			dst = dst[:len(dst)-2]
		} else {
			dst = appendSep(dst)
			if t.role == roleAssistant {
				dst = append(dst, `{"role":"assistant","content":[`...)
			} else {
				dst = append(dst, `{"role":"user","content":[`...)
			}
		}
		last = t.role
		for j := range t.parts {
			if t.parts[j].kind == partToolResult {
				dst = appendAnthropicToolResult(dst, &t.parts[j])
			}
		}
		for j := range t.parts {
			if t.parts[j].kind != partToolResult {
				dst = appendAnthropicBlock(dst, &t.parts[j])
			}
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, ']')
	if len(c.tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range c.tools {
			t := &c.tools[i]
			dst = appendSep(dst)
			dst = append(dst, '{')
			dst = appendStringField(dst, "name", t.name)
			if t.description != "" {
				dst = appendStringField(dst, "description", t.description)
			}
			dst = appendKey(dst, "input_schema")
			if t.schema.IsObject() {
				dst = appendCompactJSON(dst, t.schema.Raw)
			} else {
				dst = append(dst, `{"type":"object","properties":{}}`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
		dst = appendAnthropicToolChoice(dst, c)
	}
	dst = appendSampling(dst, c, true)
	if k := c.topK; isNumber(k) && k.Int() >= 0 {
		dst = strconv.AppendInt(appendKey(dst, "top_k"), k.Int(), 10)
	}
	if n := countStops(c.stop); n > 0 {
		dst = append(dst, `,"stop_sequences":[`...)
		for _, s := range c.stop {
			if strings.TrimSpace(s) != "" {
				dst = AppendJSONString(appendSep(dst), s)
			}
		}
		dst = append(dst, ']')
	}
	if c.user != "" {
		dst = append(dst, `,"metadata":{"user_id":`...)
		dst = AppendJSONString(dst, c.user)
		dst = append(dst, '}')
	}
	if stream {
		dst = append(dst, `,"stream":true`...)
	}
	return append(dst, '}')
}

// hasAnthropicContent reports whether a turn has any block the messages shape
// accepts: it rejects empty text blocks and messages without content.
func (t *convTurn) hasAnthropicContent() bool {
	for i := range t.parts {
		if p := &t.parts[i]; p.kind != partText || p.text != "" {
			return true
		}
	}
	return false
}

// appendAnthropicBlock writes a text, image or tool_use block.
func appendAnthropicBlock(dst []byte, p *convPart) []byte {
	switch p.kind {
	case partText:
		if p.text == "" {
			return dst
		}
		dst = appendSep(dst)
		dst = append(dst, `{"type":"text","text":`...)
		dst = AppendJSONString(dst, p.text)
		return append(dst, '}')
	case partImage:
		dst = appendSep(dst)
		dst = append(dst, `{"type":"image","source":`...)
		dst = appendAnthropicImageSource(dst, p)
		return append(dst, '}')
	case partToolCall:
		dst = appendSep(dst)
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = AppendJSONString(dst, anthropicToolID(p.id))
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, p.name)
		dst = append(dst, `,"input":`...)
		dst = appendToolInput(dst, p.text)
		return append(dst, '}')
	}
	return dst
}

// appendAnthropicToolResult writes a tool_result block; its content is a
// string when it is one text, and text and image blocks otherwise.
func appendAnthropicToolResult(dst []byte, p *convPart) []byte {
	dst = appendSep(dst)
	dst = append(dst, `{"type":"tool_result","tool_use_id":`...)
	dst = AppendJSONString(dst, anthropicToolID(p.id))
	switch {
	case len(p.content) == 1 && p.content[0].kind == partText:
		if p.content[0].text != "" {
			dst = appendStringField(dst, "content", p.content[0].text)
		}
	case len(p.content) > 0:
		dst = append(dst, `,"content":[`...)
		for i := range p.content {
			dst = appendAnthropicBlock(dst, &p.content[i])
		}
		dst = append(dst, ']')
	}
	if p.isError {
		dst = append(dst, `,"is_error":true`...)
	}
	return append(dst, '}')
}

// appendToolInput writes tool-call arguments as the input object of a
// tool_use block. Arguments that are not a JSON object (models do emit
// truncated or invalid JSON) become an empty object, which the upstream
// accepts, rather than a request it would reject.
func appendToolInput(dst []byte, args string) []byte {
	args = strings.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' || !gjson.Valid(args) {
		return append(dst, "{}"...)
	}
	return appendCompactJSON(dst, args)
}

// appendAnthropicToolChoice writes tool_choice. "none" keeps the tools
// defined (the history may still hold calls to them) and forbids new calls;
// a client that turned parallel calls off gets disable_parallel_tool_use.
func appendAnthropicToolChoice(dst []byte, c *conversation) []byte {
	switch c.choice {
	case choiceNone:
		return append(dst, `,"tool_choice":{"type":"none"}`...)
	case choiceAuto:
		dst = append(dst, `,"tool_choice":{"type":"auto"`...)
	case choiceRequired:
		dst = append(dst, `,"tool_choice":{"type":"any"`...)
	case choiceTool:
		dst = append(dst, `,"tool_choice":{"type":"tool","name":`...)
		dst = AppendJSONString(dst, c.choiceName)
	default:
		if c.parallel != switchOff {
			return dst
		}
		dst = append(dst, `,"tool_choice":{"type":"auto"`...)
	}
	if c.parallel == switchOff {
		dst = append(dst, `,"disable_parallel_tool_use":true`...)
	}
	return append(dst, '}')
}

// anthropicToolID returns a tool-call id in the form the messages shape
// requires (letters, digits, "_" and "-"). Ids from other upstreams may hold
// other characters; the same replacement on a call and on its result keeps
// them paired.
func anthropicToolID(id string) string {
	for i := 0; i < len(id); i++ {
		if !isToolIDByte(id[i]) {
			b := []byte(id)
			for j := i; j < len(b); j++ {
				if !isToolIDByte(b[j]) {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return id
}

func isToolIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// countStops counts the stop sequences the messages shape accepts: it rejects
// those made only of whitespace.
func countStops(stops []string) int {
	n := 0
	for _, s := range stops {
		if strings.TrimSpace(s) != "" {
			n++
		}
	}
	return n
}
