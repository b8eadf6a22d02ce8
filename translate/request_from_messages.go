package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// messagesRequestMembers are the members of a messages-shape request that
// have a counterpart in another dialect, gathered in one pass over the body.
type messagesRequestMembers struct {
	system, messages, tools, toolChoice, maxTokens gjson.Result
	temperature, topP, topK, stop, metadata        gjson.Result
}

func (m *messagesRequestMembers) set(key string, v gjson.Result) {
	switch key {
	case "system":
		setOnce(&m.system, v)
	case "messages":
		setOnce(&m.messages, v)
	case "tools":
		setOnce(&m.tools, v)
	case "tool_choice":
		setOnce(&m.toolChoice, v)
	case "max_tokens":
		setOnce(&m.maxTokens, v)
	case "temperature":
		setOnce(&m.temperature, v)
	case "top_p":
		setOnce(&m.topP, v)
	case "top_k":
		setOnce(&m.topK, v)
	case "stop_sequences":
		setOnce(&m.stop, v)
	case "metadata":
		setOnce(&m.metadata, v)
	}
}

// messagesConversation reads a messages-shape request into a conversation.
// Thinking blocks in the history are left out: they are the model's private
// reasoning, signed for the provider that produced them, and no other dialect
// accepts them.
func messagesConversation(root gjson.Result) (*conversation, error) {
	var m messagesRequestMembers
	eachMember(root, m.set)
	c := &conversation{}
	if sys := m.system; sys.Type == gjson.String {
		if sys.Str != "" {
			c.system = append(c.system, sys.Str)
		}
	} else {
		eachElement(sys, func(b gjson.Result) bool {
			if t := b.Get("text").Str; t != "" {
				c.system = append(c.system, t)
			}
			return true
		})
	}
	var err error
	i := 0
	eachElement(m.messages, func(msg gjson.Result) bool {
		err = c.addMessagesMessage(msg, i)
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	i = 0
	eachElement(m.tools, func(t gjson.Result) bool {
		if typ := t.Get("type").Str; typ != "" && typ != "custom" {
			err = invalid(fmt.Sprintf("tools[%d].type", i), "%q tools can only be sent to a messages upstream", typ)
			return false
		}
		c.tools = append(c.tools, convTool{
			name:        t.Get("name").Str,
			description: t.Get("description").Str,
			schema:      t.Get("input_schema"),
		})
		i++
		return true
	})
	if err != nil {
		return nil, err
	}
	tc := m.toolChoice
	switch tc.Get("type").Str {
	case "auto":
		c.choice = choiceAuto
	case "any":
		c.choice = choiceRequired
	case "tool":
		c.choice, c.choiceName = choiceTool, tc.Get("name").Str
	case "none":
		c.choice = choiceNone
	}
	if tc.Get("disable_parallel_tool_use").Type == gjson.True {
		c.parallel = switchOff
	}
	if isNumber(m.maxTokens) {
		c.maxTokens = m.maxTokens.Int()
	}
	c.temperature = m.temperature
	c.topP = m.topP
	c.topK = m.topK
	c.stop = stopList(m.stop)
	c.user = m.metadata.Get("user_id").Str
	return c, nil
}

// addMessagesMessage adds the i-th message of a messages-shape request.
func (c *conversation) addMessagesMessage(msg gjson.Result, i int) error {
	var roleMember, content gjson.Result
	eachMember(msg, func(key string, v gjson.Result) {
		switch key {
		case "role":
			setOnce(&roleMember, v)
		case "content":
			setOnce(&content, v)
		}
	})
	var role convRole
	switch r := roleMember.Str; r {
	case "user":
		role = roleUser
	case "assistant":
		role = roleAssistant
	case "system":
		if t := textParts(content); t != "" {
			c.system = append(c.system, t)
		}
		return nil
	default:
		return invalid(fmt.Sprintf("messages[%d].role", i), "%q messages can only be sent to a messages upstream", r)
	}
	if content.Type == gjson.String {
		c.add(role, convPart{kind: partText, text: content.Str})
		return nil
	}
	var err error
	j := 0
	eachElement(content, func(b gjson.Result) bool {
		switch typ := b.Get("type").Str; typ {
		case "text":
			c.add(role, convPart{kind: partText, text: b.Get("text").Str})
		case "image":
			p, ok := anthropicImagePart(b.Get("source"))
			if !ok {
				err = invalid(fmt.Sprintf("messages[%d].content[%d].source.type", i, j), "%q image sources can only be sent to a messages upstream", b.Get("source.type").Str)
				break
			}
			c.add(role, p)
		case "tool_use":
			c.add(role, convPart{
				kind: partToolCall,
				id:   b.Get("id").Str,
				name: b.Get("name").Str,
				text: toolInputArguments(b.Get("input")),
			})
		case "tool_result":
			p := convPart{kind: partToolResult, id: b.Get("tool_use_id").Str, isError: b.Get("is_error").Type == gjson.True}
			var k int
			if p.content, k = anthropicResultContent(b.Get("content")); k >= 0 {
				err = invalid(fmt.Sprintf("messages[%d].content[%d].content[%d].type", i, j, k), "only text and image blocks can be sent as a tool result to another dialect")
				break
			}
			c.add(role, p)
		case "thinking", "redacted_thinking":
		default:
			err = invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "%q blocks can only be sent to a messages upstream", typ)
		}
		j++
		return err == nil
	})
	return err
}

// anthropicImagePart reads an image block's source; ok is false for source
// types other than base64 and url.
func anthropicImagePart(src gjson.Result) (p convPart, ok bool) {
	switch src.Get("type").Str {
	case "base64":
		return convPart{kind: partImage, mediaType: src.Get("media_type").Str, data: src.Get("data").Str}, true
	case "url":
		return convPart{kind: partImage, url: src.Get("url").Str}, true
	}
	return convPart{}, false
}

// anthropicResultContent reads a tool_result's content: a string, or text and
// image blocks. bad is the index of the first block it cannot carry, or -1.
func anthropicResultContent(v gjson.Result) (parts []convPart, bad int) {
	if v.Type == gjson.String {
		return []convPart{{kind: partText, text: v.Str}}, -1
	}
	bad = -1
	k := 0
	eachElement(v, func(b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			parts = append(parts, convPart{kind: partText, text: b.Get("text").Str})
			k++
			return true
		case "image":
			if p, ok := anthropicImagePart(b.Get("source")); ok {
				parts = append(parts, p)
				k++
				return true
			}
		}
		bad = k
		return false
	})
	return parts, bad
}

// toolInputArguments turns a tool_use input object into the arguments JSON
// text the OpenAI shapes carry.
func toolInputArguments(input gjson.Result) string {
	if !input.IsObject() {
		return "{}"
	}
	return compactJSON(input.Raw)
}
