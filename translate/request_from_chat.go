package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// chatConversation reads a chat-completions request into a conversation.
// System and developer messages become the system prompt wherever they stand;
// tool messages become tool results in a user turn, which is where the other
// dialects carry them. Fields with no counterpart elsewhere (n, logprobs,
// presence_penalty, seed, ...) are not read.
func chatConversation(root gjson.Result) (*conversation, error) {
	c := &conversation{}
	var err error
	i := 0
	eachElement(root.Get("messages"), func(m gjson.Result) bool {
		err = c.addChatMessage(m, i)
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	i = 0
	eachElement(root.Get("tools"), func(t gjson.Result) bool {
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
	switch tc := root.Get("tool_choice"); {
	case tc.Type == gjson.String:
		c.choice = choiceFromString(tc.Str)
	case tc.IsObject() && tc.Get("function.name").Type == gjson.String:
		c.choice, c.choiceName = choiceTool, tc.Get("function.name").Str
	case tc.IsObject():
		c.choice = choiceAuto
	}
	c.parallel = switchOf(root.Get("parallel_tool_calls"))
	if n := root.Get("max_completion_tokens"); isNumber(n) {
		c.maxTokens = n.Int()
	} else if n := root.Get("max_tokens"); isNumber(n) {
		c.maxTokens = n.Int()
	}
	c.temperature = root.Get("temperature")
	c.topP = root.Get("top_p")
	c.stop = stopList(root.Get("stop"))
	c.user = root.Get("user").Str
	c.metadata = root.Get("metadata")
	c.store = switchOf(root.Get("store"))
	c.effort = root.Get("reasoning_effort").Str
	if rf := root.Get("response_format"); rf.IsObject() {
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
func (c *conversation) addChatMessage(m gjson.Result, i int) error {
	content := m.Get("content")
	switch role := m.Get("role").Str; role {
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
		if r := m.Get("refusal"); r.Type == gjson.String && r.Str != "" && textParts(content) == "" {
			c.add(roleAssistant, convPart{kind: partText, text: r.Str})
		}
		eachElement(m.Get("tool_calls"), func(tc gjson.Result) bool {
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
			id:      m.Get("tool_call_id").Str,
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
