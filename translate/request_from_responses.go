package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// responsesStateFields name the responses-shape fields that point at state
// kept by an OpenAI upstream. No other upstream can resolve them, and
// dropping them would silently lose the conversation they stand for.
var responsesStateFields = [...]string{"previous_response_id", "conversation", "prompt"}

// responsesRequestMembers are the members of a responses-shape request that
// have a counterpart in another dialect, or that stop it from having one,
// gathered in one pass over the body.
type responsesRequestMembers struct {
	state                                              [len(responsesStateFields)]gjson.Result
	instructions, input, tools, toolChoice, parallel   gjson.Result
	maxOutputTokens, temperature, topP, user, safetyID gjson.Result
	metadata, store, reasoning, text                   gjson.Result
}

func (m *responsesRequestMembers) set(key string, v gjson.Result) {
	switch key {
	case "instructions":
		setOnce(&m.instructions, v)
	case "input":
		setOnce(&m.input, v)
	case "tools":
		setOnce(&m.tools, v)
	case "tool_choice":
		setOnce(&m.toolChoice, v)
	case "parallel_tool_calls":
		setOnce(&m.parallel, v)
	case "max_output_tokens":
		setOnce(&m.maxOutputTokens, v)
	case "temperature":
		setOnce(&m.temperature, v)
	case "top_p":
		setOnce(&m.topP, v)
	case "user":
		setOnce(&m.user, v)
	case "safety_identifier":
		setOnce(&m.safetyID, v)
	case "metadata":
		setOnce(&m.metadata, v)
	case "store":
		setOnce(&m.store, v)
	case "reasoning":
		setOnce(&m.reasoning, v)
	case "text":
		setOnce(&m.text, v)
	default:
		for i, f := range responsesStateFields {
			if key == f {
				setOnce(&m.state[i], v)
			}
		}
	}
}

// responsesConversation reads a responses-shape request into a conversation.
// instructions lead the system prompt; function_call and function_call_output
// items become tool calls and tool results; reasoning items are left out
// because only the provider that produced them can read them.
func responsesConversation(root gjson.Result) (*conversation, error) {
	var m responsesRequestMembers
	eachMember(root, m.set)
	for i, f := range responsesStateFields {
		if v := m.state[i]; v.Exists() && v.Type != gjson.Null {
			return nil, invalid(f, "%s can only be sent to a responses upstream", f)
		}
	}
	c := &conversation{}
	if ins := m.instructions; ins.Type == gjson.String && ins.Str != "" {
		c.system = append(c.system, ins.Str)
	}
	if m.input.Type == gjson.String {
		c.add(roleUser, convPart{kind: partText, text: m.input.Str})
	}
	var err error
	i := 0
	eachElement(m.input, func(item gjson.Result) bool {
		err = c.addResponsesItem(item, i)
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	i = 0
	eachElement(m.tools, func(t gjson.Result) bool {
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
	switch tc := m.toolChoice; {
	case tc.Type == gjson.String:
		c.choice = choiceFromString(tc.Str)
	case tc.Get("type").Str == "function":
		c.choice, c.choiceName = choiceTool, tc.Get("name").Str
	case tc.IsObject():
		c.choice = choiceAuto
	}
	c.parallel = switchOf(m.parallel)
	if isNumber(m.maxOutputTokens) {
		c.maxTokens = m.maxOutputTokens.Int()
	}
	c.temperature = m.temperature
	c.topP = m.topP
	c.user = m.user.Str
	if c.user == "" {
		c.user = m.safetyID.Str
	}
	c.metadata = m.metadata
	c.store = switchOf(m.store)
	c.effort = m.reasoning.Get("effort").Str
	if f := m.text.Get("format"); f.IsObject() {
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
	var m responsesItemMembers
	eachMember(item, m.set)
	typ := m.typ.Str
	if typ == "" && m.role.Exists() {
		typ = "message"
	}
	switch typ {
	case "message":
		return c.addResponsesMessage(m.role.Str, m.content, i)
	case "function_call":
		c.add(roleAssistant, convPart{
			kind: partToolCall,
			id:   m.callID.Str,
			name: m.name.Str,
			text: m.arguments.Str,
		})
	case "function_call_output":
		p := convPart{kind: partToolResult, id: m.callID.Str}
		out := m.output
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

// responsesItemMembers are the members of an input item.
type responsesItemMembers struct {
	typ, role, content, callID, name, arguments, output gjson.Result
}

func (m *responsesItemMembers) set(key string, v gjson.Result) {
	switch key {
	case "type":
		setOnce(&m.typ, v)
	case "role":
		setOnce(&m.role, v)
	case "content":
		setOnce(&m.content, v)
	case "call_id":
		setOnce(&m.callID, v)
	case "name":
		setOnce(&m.name, v)
	case "arguments":
		setOnce(&m.arguments, v)
	case "output":
		setOnce(&m.output, v)
	}
}

// addResponsesMessage adds a message item: system and developer messages join
// the system prompt, user and assistant messages their turns.
func (c *conversation) addResponsesMessage(r string, content gjson.Result, i int) error {
	var role convRole
	switch r {
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
