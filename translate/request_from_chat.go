package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// chatRequestMembers are the members of a chat-completions request that have
// a counterpart in another dialect, gathered in one pass over the body.
// Members with none (n, logprobs, presence_penalty, seed, ...) are not read.
type chatRequestMembers struct {
	messages, tools, toolChoice, parallel           gjson.Result
	maxCompletionTokens, maxTokens, temperature     gjson.Result
	topP, stop, user, metadata, store, effort, form gjson.Result
}

func (m *chatRequestMembers) set(key string, v gjson.Result) {
	switch key {
	case "messages":
		setOnce(&m.messages, v)
	case "tools":
		setOnce(&m.tools, v)
	case "tool_choice":
		setOnce(&m.toolChoice, v)
	case "parallel_tool_calls":
		setOnce(&m.parallel, v)
	case "max_completion_tokens":
		setOnce(&m.maxCompletionTokens, v)
	case "max_tokens":
		setOnce(&m.maxTokens, v)
	case "temperature":
		setOnce(&m.temperature, v)
	case "top_p":
		setOnce(&m.topP, v)
	case "stop":
		setOnce(&m.stop, v)
	case "user":
		setOnce(&m.user, v)
	case "metadata":
		setOnce(&m.metadata, v)
	case "store":
		setOnce(&m.store, v)
	case "reasoning_effort":
		setOnce(&m.effort, v)
	case "response_format":
		setOnce(&m.form, v)
	}
}

// chatMessageMembers are the members of a chat message.
type chatMessageMembers struct {
	role, content, toolCalls, toolCallID, refusal gjson.Result
}

func (m *chatMessageMembers) set(key string, v gjson.Result) {
	switch key {
	case "role":
		setOnce(&m.role, v)
	case "content":
		setOnce(&m.content, v)
	case "tool_calls":
		setOnce(&m.toolCalls, v)
	case "tool_call_id":
		setOnce(&m.toolCallID, v)
	case "refusal":
		setOnce(&m.refusal, v)
	}
}

// chatConversation reads a chat-completions request into a conversation.
// System and developer messages become the system prompt wherever they stand;
// tool messages become tool results in a user turn, which is where the other
// dialects carry them.
func chatConversation(root gjson.Result) (*conversation, error) {
	var m chatRequestMembers
	eachMember(root, m.set)
	c := &conversation{}
	var err error
	i := 0
	eachElement(m.messages, func(msg gjson.Result) bool {
		err = c.addChatMessage(msg, i)
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	i = 0
	eachElement(m.tools, func(t gjson.Result) bool {
		if typ := t.Get("type").Str; typ != "function" && typ != "" {
			err = invalid(fmt.Sprintf("tools[%d].type", i), "%q tools can only be sent to a chat-completions upstream", typ)
			return false
		}
		fn := t.Get("function")
		c.tools = append(c.tools, convTool{
			name:        fn.Get("name").Str,
			description: fn.Get("description").Str,
			schema:      fn.Get("parameters"),
			strict:      fn.Get("strict"),
		})
		i++
		return true
	})
	if err != nil {
		return nil, err
	}
	switch tc := m.toolChoice; {
	case tc.Type == gjson.String:
		c.choice = choiceFromString(tc.Str)
	case tc.IsObject() && tc.Get("function.name").Type == gjson.String:
		c.choice, c.choiceName = choiceTool, tc.Get("function.name").Str
	case tc.IsObject():
		c.choice = choiceAuto
	}
	c.parallel = switchOf(m.parallel)
	if isNumber(m.maxCompletionTokens) {
		c.maxTokens = m.maxCompletionTokens.Int()
	} else if isNumber(m.maxTokens) {
		c.maxTokens = m.maxTokens.Int()
	}
	c.temperature = m.temperature
	c.topP = m.topP
	c.stop = stopList(m.stop)
	c.user = m.user.Str
	c.metadata = m.metadata
	c.store = switchOf(m.store)
	c.effort = m.effort.Str
	if rf := m.form; rf.IsObject() {
		js := rf.Get("json_schema")
		c.format = convFormat{
			typ:         rf.Get("type").Str,
			name:        js.Get("name").Str,
			description: js.Get("description").Str,
			schema:      js.Get("schema"),
			strict:      js.Get("strict"),
		}
	}
	return c, nil
}

// addChatMessage adds the i-th chat message to the conversation.
func (c *conversation) addChatMessage(msg gjson.Result, i int) error {
	var m chatMessageMembers
	eachMember(msg, m.set)
	content := m.content
	switch role := m.role.Str; role {
	case "system", "developer":
		if t := textParts(content); t != "" {
			c.system = append(c.system, t)
		}
	case "user":
		if content.Type == gjson.String {
			c.add(roleUser, convPart{kind: partText, text: content.Str})
			return nil
		}
		var err error
		j := 0
		eachElement(content, func(p gjson.Result) bool {
			switch typ := p.Get("type").Str; typ {
			case "text":
				c.add(roleUser, convPart{kind: partText, text: p.Get("text").Str})
			case "image_url":
				img := p.Get("image_url")
				part := convPart{kind: partImage, url: img.Get("url").Str, detail: img.Get("detail").Str}
				if img.Type == gjson.String {
					part.url = img.Str
				}
				c.add(roleUser, part)
			default:
				err = invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "%q content parts can only be sent to a chat-completions upstream", typ)
			}
			j++
			return err == nil
		})
		return err
	case "assistant":
		if content.Type == gjson.String && content.Str != "" {
			c.add(roleAssistant, convPart{kind: partText, text: content.Str})
		}
		eachElement(content, func(p gjson.Result) bool {
			switch p.Get("type").Str {
			case "text":
				c.add(roleAssistant, convPart{kind: partText, text: p.Get("text").Str})
			case "refusal":
				c.add(roleAssistant, convPart{kind: partText, text: p.Get("refusal").Str})
			}
			return true
		})
		if r := m.refusal; r.Type == gjson.String && r.Str != "" && textParts(content) == "" {
			c.add(roleAssistant, convPart{kind: partText, text: r.Str})
		}
		eachElement(m.toolCalls, func(tc gjson.Result) bool {
			fn := tc.Get("function")
			c.add(roleAssistant, convPart{
				kind: partToolCall,
				id:   tc.Get("id").Str,
				name: fn.Get("name").Str,
				text: fn.Get("arguments").Str,
			})
			return true
		})
	case "tool":
		c.add(roleUser, convPart{
			kind:    partToolResult,
			id:      m.toolCallID.Str,
			content: []convPart{{kind: partText, text: textParts(content)}},
		})
	default:
		return invalid(fmt.Sprintf("messages[%d].role", i), "%q messages can only be sent to a chat-completions upstream", role)
	}
	return nil
}

// choiceFromString reads the string forms of tool_choice the OpenAI shapes
// share.
func choiceFromString(s string) toolChoiceMode {
	switch s {
	case "none":
		return choiceNone
	case "required":
		return choiceRequired
	case "auto":
		return choiceAuto
	}
	return choiceUnset
}

// stopList reads stop sequences given as one string or an array of strings.
func stopList(v gjson.Result) []string {
	if v.Type == gjson.String {
		return []string{v.Str}
	}
	var out []string
	eachElement(v, func(s gjson.Result) bool {
		if s.Type == gjson.String {
			out = append(out, s.Str)
		}
		return true
	})
	return out
}
