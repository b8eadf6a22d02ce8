package demoupstream

import (
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
)

// messagesFields are the top-level fields the Anthropic Messages API accepts.
var messagesFields = fieldSet(
	"model", "messages", "max_tokens", "container", "context_management", "mcp_servers",
	"metadata", "service_tier", "stop_sequences", "stream", "system", "temperature",
	"thinking", "tool_choice", "tools", "top_k", "top_p",
)

func isAnthropicText(blockType string) bool { return blockType == "text" }

// readMessages reads and validates an Anthropic Messages request. Error
// messages follow the real API's "<field path>: <problem>" form.
func readMessages(body string, strict bool) (*turn, *apiError) {
	root, e := parseBody(body, dialectAnthropic)
	if e != nil {
		return nil, e
	}
	var model, messages, maxTokens, system, temperature, tools, toolChoice, stream gjson.Result
	unknown := ""
	root.ForEach(func(k, v gjson.Result) bool {
		switch name := k.String(); name {
		case "model":
			model = v
		case "messages":
			messages = v
		case "max_tokens":
			maxTokens = v
		case "system":
			system = v
		case "temperature":
			temperature = v
		case "tools":
			tools = v
		case "tool_choice":
			toolChoice = v
		case "stream":
			stream = v
		default:
			if strict && unknown == "" && !messagesFields[name] {
				unknown = name
			}
		}
		return true
	})
	if unknown != "" {
		return nil, invalid(unknown, "", "%s: Extra inputs are not permitted", unknown)
	}
	t := &turn{}
	switch {
	case !model.Exists():
		return nil, invalid("model", "", "model: Field required")
	case model.Type != gjson.String || model.Str == "":
		return nil, invalid("model", "", "model: Input should be a valid string")
	}
	t.model = model.Str
	switch {
	case !maxTokens.Exists():
		return nil, invalid("max_tokens", "", "max_tokens: Field required")
	case !isInteger(maxTokens):
		return nil, invalid("max_tokens", "", "max_tokens: Input should be a valid integer")
	case maxTokens.Num < 1:
		return nil, invalid("max_tokens", "", "max_tokens: Input should be greater than or equal to 1")
	}
	if e = readAnthropicMessages(messages, t); e != nil {
		return nil, e
	}
	switch {
	case !temperature.Exists():
	case temperature.Type != gjson.Number:
		return nil, invalid("temperature", "", "temperature: Input should be a valid number")
	case temperature.Num < 0:
		return nil, invalid("temperature", "", "temperature: Input should be greater than or equal to 0")
	case temperature.Num > 1:
		return nil, invalid("temperature", "", "temperature: Input should be less than or equal to 1")
	}
	switch {
	case !system.Exists():
	case system.Type == gjson.String || system.IsArray():
		t.inputWords += contentWords(system, isAnthropicText)
	default:
		return nil, invalid("system", "", "system: Input should be a valid string")
	}
	switch {
	case !stream.Exists():
	case stream.Type != gjson.True && stream.Type != gjson.False:
		return nil, invalid("stream", "", "stream: Input should be a valid boolean")
	default:
		t.stream = stream.Bool()
	}
	if e = readAnthropicTools(tools, toolChoice, t); e != nil {
		return nil, e
	}
	return t, nil
}

// readAnthropicMessages validates the messages and fills in the turn's
// texts. Like the real API it requires every tool_result to answer a
// tool_use of the assistant message right before it, and every tool_use to
// be answered in the next message. A user message made only of tool results
// is a tool turn, not user text: the last user text comes from the last
// user message that says something of its own.
func readAnthropicMessages(messages gjson.Result, t *turn) *apiError {
	switch {
	case !messages.Exists():
		return invalid("messages", "", "messages: Field required")
	case !messages.IsArray():
		return invalid("messages", "", "messages: Input should be a valid list")
	}
	var (
		e          *apiError
		i          int
		lastUser   gjson.Result
		lastResult gjson.Result
		lastRole   string
		endsResult bool
		pending    toolIDs // the tool_use ids of the previous message
		uses       toolIDs
		pendingAt  int
	)
	messages.ForEach(func(_, m gjson.Result) bool {
		at := "messages." + strconv.Itoa(i)
		if !m.IsObject() {
			e = invalid(at, "", "%s: Input should be a valid dictionary", at)
			return false
		}
		role, content := m.Get("role"), m.Get("content")
		r := role.String()
		if role.Type != gjson.String || (r != "user" && r != "assistant") {
			e = invalid(at+".role", "", "%s.role: Input should be 'user' or 'assistant'", at)
			return false
		}
		uses.reset()
		results := 0
		// ownText is whether the message says something besides tool results.
		ownText := true
		switch {
		case !content.Exists():
			e = invalid(at+".content", "", "%s.content: Field required", at)
		case content.Type == gjson.String:
			t.inputWords += countWords(content.Str)
		case content.IsArray():
			ownText = false
			j := 0
			content.ForEach(func(_, blk gjson.Result) bool {
				switch blk.Get("type").String() {
				case "tool_use":
					if r == "assistant" {
						uses.add(blk.Get("id").String())
					}
				case "tool_result":
					id := blk.Get("tool_use_id").String()
					if r != "user" || !pending.answer(id) {
						e = invalid(at+".content."+strconv.Itoa(j), "", "%s.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", at, j, id)
						return false
					}
					results++
					lastResult = blk.Get("content")
					t.inputWords += contentWords(lastResult, isAnthropicText)
				case "text":
					t.inputWords += countWords(blk.Get("text").String())
					ownText = true
				default:
					ownText = true
				}
				j++
				return true
			})
		default:
			e = invalid(at+".content", "", "%s.content: Input should be a valid list", at)
		}
		if e != nil {
			return false
		}
		if missing := pending.unanswered(); missing != "" {
			e = invalid("messages."+strconv.Itoa(pendingAt), "", "messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", pendingAt, missing)
			return false
		}
		if r == "user" && (ownText || results == 0) {
			lastUser = content
		}
		endsResult = results > 0
		// The two trackers swap roles so that neither is reallocated.
		pending, uses = uses, pending
		pendingAt, lastRole = i, r
		i++
		return true
	})
	if e != nil {
		return e
	}
	if i == 0 {
		return invalid("messages", "", "messages: List should have at least 1 item after validation, not 0")
	}
	t.userText = contentText(lastUser, isAnthropicText)
	if lastRole == "user" && endsResult {
		t.endsWithToolResult = true
		t.toolResult = contentText(lastResult, isAnthropicText)
	}
	return nil
}

// readAnthropicTools reads the client tools (server tools such as
// web_search are run by the API, never called by the model here) and
// tool_choice.
func readAnthropicTools(tools, toolChoice gjson.Result, t *turn) *apiError {
	if tools.Exists() && !tools.IsArray() {
		return invalid("tools", "", "tools: Input should be a valid list")
	}
	var e *apiError
	i := 0
	tools.ForEach(func(_, tl gjson.Result) bool {
		if typ := tl.Get("type"); !typ.Exists() || typ.String() == "custom" {
			name := tl.Get("name").String()
			if name == "" {
				e = invalid("tools."+strconv.Itoa(i)+".name", "", "tools.%d.name: Field required", i)
				return false
			}
			t.tools = append(t.tools, tool{name: name, schema: tl.Get("input_schema")})
		}
		i++
		return true
	})
	if e != nil || !toolChoice.Exists() {
		return e
	}
	switch typ := toolChoice.Get("type").String(); typ {
	case "auto", "any":
	case "none":
		t.toolsOff = true
	case "tool":
		t.forced = toolChoice.Get("name").String()
		if t.forced == "" {
			return invalid("tool_choice.tool.name", "", "tool_choice.tool.name: Field required")
		}
		for _, tl := range t.tools {
			if tl.name == t.forced {
				return nil
			}
		}
		return invalid("tool_choice.tool.name", "", "tool_choice.tool.name: Tool '%s' not found in tools", t.forced)
	default:
		return invalid("tool_choice.type", "", "tool_choice: Input tag '%s' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'", typ)
	}
	return nil
}

// messages serves POST .../messages.
func (s *server) messages(w http.ResponseWriter, r *http.Request, body string) {
	t, e := readMessages(body, s.cfg.Strict)
	if e != nil {
		writeError(w, r, dialectAnthropic, e)
		return
	}
	rep := answer(t)
	if !hold(w, r, dialectAnthropic, &rep) {
		return
	}
	c := messageReply{id: newMessageID(), model: t.model, rep: &rep}
	if t.stream {
		c.stream(w)
		return
	}
	bp := getBuffer()
	defer putBuffer(bp)
	*bp = c.appendMessage((*bp)[:0])
	writeJSON(w, r, http.StatusOK, *bp)
}

// messageReply writes a reply in the Anthropic Messages shapes.
type messageReply struct {
	id    string
	model string
	rep   *reply
}

func (c *messageReply) stopReason() string {
	if c.rep.call != nil {
		return "tool_use"
	}
	return "end_turn"
}

// appendMessage appends the non-streamed message object.
func (c *messageReply) appendMessage(b []byte) []byte {
	b = c.appendHead(b)
	b = append(b, `,"content":[`...)
	b = c.appendBlock(b, true)
	b = append(b, `],"stop_reason":`...)
	b = appendString(b, c.stopReason())
	b = append(b, `,"stop_sequence":null,"stop_details":null,"usage":`...)
	b = appendAnthropicUsage(b, c.rep, c.rep.outputTokens)
	return append(b, '}')
}

func (c *messageReply) appendHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	return appendString(b, c.model)
}

// appendBlock appends the one content block: the text, or the tool_use the
// model makes instead of answering. A block about to be streamed is empty.
func (c *messageReply) appendBlock(b []byte, full bool) []byte {
	if call := c.rep.call; call != nil {
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, "toolu_"+call.digest)
		b = append(b, `,"name":`...)
		b = appendString(b, call.name)
		b = append(b, `,"input":`...)
		if full {
			b = append(b, call.arguments...)
		} else {
			b = append(b, `{}`...)
		}
		return append(b, '}')
	}
	b = append(b, `{"type":"text","text":`...)
	if full {
		b = appendString(b, c.rep.text)
	} else {
		b = append(b, `""`...)
	}
	return append(b, '}')
}

// appendAnthropicUsage writes a messages usage object: input_tokens leaves
// out the prompt tokens read from and written to the cache, reported apart.
func appendAnthropicUsage(b []byte, r *reply, output int) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, r.inputTokens)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = appendInt(b, r.cacheWrite)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = appendInt(b, r.cacheRead)
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, output)
	return append(b, `,"service_tier":"standard"}`...)
}

// stream writes the reply as the Messages event sequence: message_start,
// content_block_start, a ping, one content_block_delta per piece,
// content_block_stop, message_delta with the stop reason and output usage,
// and message_stop.
func (c *messageReply) stream(w http.ResponseWriter) {
	es := openStream(w, c.rep.cut)
	b := append([]byte(nil), `{"type":"message_start","message":`...)
	b = c.appendHead(b)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":`...)
	// The real API reports one output token at message_start.
	b = appendAnthropicUsage(b, c.rep, 1)
	es.emit("message_start", append(b, `}}`...))

	b = append(b[:0], `{"type":"content_block_start","index":0,"content_block":`...)
	b = c.appendBlock(b, false)
	es.emit("content_block_start", append(b, '}'))
	// Spelled with a space, byte for byte as the real API sends it.
	es.emit("ping", []byte(`{"type": "ping"}`))

	if call := c.rep.call; call != nil {
		for _, f := range fragments(call.arguments) {
			b = append(b[:0], `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`...)
			b = appendString(b, f)
			es.piece("content_block_delta", append(b, `}}`...))
		}
	} else {
		for _, p := range pieces(c.rep.text) {
			b = append(b[:0], `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`...)
			b = appendString(b, p)
			es.piece("content_block_delta", append(b, `}}`...))
		}
	}
	es.endPieces()
	es.emit("content_block_stop", []byte(`{"type":"content_block_stop","index":0}`))

	b = append(b[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	b = appendString(b, c.stopReason())
	b = append(b, `,"stop_sequence":null,"stop_details":null},"usage":{"output_tokens":`...)
	b = appendInt(b, c.rep.outputTokens)
	es.emit("message_delta", append(b, `}}`...))
	es.emit("message_stop", []byte(`{"type":"message_stop"}`))
}
