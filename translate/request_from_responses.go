package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// responsesStateFields name the responses-shape fields that point at state
// kept by an OpenAI upstream. No other upstream can resolve them, and
// dropping them would silently lose the conversation they stand for.
var responsesStateFields = [...]string{"previous_response_id", "conversation", "prompt"}

// responsesConversation reads a responses-shape request into a conversation.
// instructions lead the system prompt; function_call and function_call_output
// items become tool calls and tool results; reasoning items are left out
// because only the provider that produced them can read them.
func responsesConversation(root gjson.Result) (*conversation, error) {
	for _, f := range responsesStateFields {
		if v := root.Get(f); v.Exists() && v.Type != gjson.Null {
			return nil, invalid(f, "%s can only be sent to a responses upstream", f)
		}
	}
	c := &conversation{}
	if ins := root.Get("instructions"); ins.Type == gjson.String && ins.Str != "" {
		c.system = append(c.system, ins.Str)
	}
	input := root.Get("input")
	if input.Type == gjson.String {
		c.add(roleUser, convPart{kind: partText, text: input.Str})
	}
	var err error
	i := 0
	eachElement(input, func(item gjson.Result) bool {
		err = c.addResponsesItem(item, i)
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	i = 0
	eachElement(root.Get("tools"), func(t gjson.Result) bool {
		if typ := t.Get("type").Str; typ != "function" {
			err = invalid(fmt.Sprintf("tools[%d].type", i), "%q tools can only be sent to a responses upstream", typ)
			return false
		}
		c.tools = append(c.tools, convTool{
			name:        t.Get("name").Str,
			description: t.Get("description").Str,
			schema:      t.Get("parameters"),
			strict:      t.Get("strict"),
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
	case tc.Get("type").Str == "function":
		c.choice, c.choiceName = choiceTool, tc.Get("name").Str
	case tc.IsObject():
		c.choice = choiceAuto
	}
	c.parallel = switchOf(root.Get("parallel_tool_calls"))
	if n := root.Get("max_output_tokens"); isNumber(n) {
		c.maxTokens = n.Int()
	}
	c.temperature = root.Get("temperature")
	c.topP = root.Get("top_p")
	c.user = root.Get("user").Str
	if c.user == "" {
		c.user = root.Get("safety_identifier").Str
	}
	c.metadata = root.Get("metadata")
	c.store = switchOf(root.Get("store"))
	c.effort = root.Get("reasoning.effort").Str
	if f := root.Get("text.format"); f.IsObject() {
		c.format = convFormat{
			typ:         f.Get("type").Str,
			name:        f.Get("name").Str,
			description: f.Get("description").Str,
			schema:      f.Get("schema"),
			strict:      f.Get("strict"),
		}
	}
	return c, nil
}

// addResponsesItem adds the i-th input item of a responses-shape request.
func (c *conversation) addResponsesItem(item gjson.Result, i int) error {
	typ := item.Get("type").Str
	if typ == "" && item.Get("role").Exists() {
		typ = "message"
	}
	switch typ {
	case "message":
		return c.addResponsesMessage(item, i)
	case "function_call":
		c.add(roleAssistant, convPart{
			kind: partToolCall,
			id:   item.Get("call_id").Str,
			name: item.Get("name").Str,
			text: item.Get("arguments").Str,
		})
	case "function_call_output":
		p := convPart{kind: partToolResult, id: item.Get("call_id").Str}
		out := item.Get("output")
		if out.Type == gjson.String {
			p.content = []convPart{{kind: partText, text: out.Str}}
		} else {
			var bad int
			if p.content, bad = responsesContentParts(out); bad >= 0 {
				return invalid(fmt.Sprintf("input[%d].output[%d].type", i, bad), "only input_text and input_image outputs can be sent to another dialect")
			}
		}
		c.add(roleUser, p)
	case "reasoning":
	default:
		return invalid(fmt.Sprintf("input[%d].type", i), "%q items can only be sent to a responses upstream", typ)
	}
	return nil
}

// addResponsesMessage adds a message item: system and developer messages join
// the system prompt, user and assistant messages their turns.
func (c *conversation) addResponsesMessage(item gjson.Result, i int) error {
	content := item.Get("content")
	var role convRole
	switch r := item.Get("role").Str; r {
	case "system", "developer":
		if t := textParts(content); t != "" {
			c.system = append(c.system, t)
		}
		return nil
	case "user":
		role = roleUser
	case "assistant":
		role = roleAssistant
	default:
		return invalid(fmt.Sprintf("input[%d].role", i), "%q messages can only be sent to a responses upstream", r)
	}
	if content.Type == gjson.String {
		c.add(role, convPart{kind: partText, text: content.Str})
		return nil
	}
	parts, bad := responsesContentParts(content)
	if bad >= 0 {
		return invalid(fmt.Sprintf("input[%d].content[%d].type", i, bad), "only text and image content can be sent to another dialect")
	}
	for _, p := range parts {
		c.add(role, p)
	}
	return nil
}

// responsesContentParts reads a content array of input_text, output_text,
// refusal and input_image parts. bad is the index of the first part it cannot
// carry (a file, audio, or an image given only by file id), or -1.
func responsesContentParts(v gjson.Result) (parts []convPart, bad int) {
	bad = -1
	k := 0
	eachElement(v, func(p gjson.Result) bool {
		switch p.Get("type").Str {
		case "input_text", "output_text", "text":
			parts = append(parts, convPart{kind: partText, text: p.Get("text").Str})
		case "refusal":
			parts = append(parts, convPart{kind: partText, text: p.Get("refusal").Str})
		case "input_image":
			u := p.Get("image_url")
			if u.Type != gjson.String {
				bad = k
				return false
			}
			parts = append(parts, convPart{kind: partImage, url: u.Str, detail: p.Get("detail").Str})
		default:
			bad = k
			return false
		}
		k++
		return true
	})
	return parts, bad
}
