package demoupstream

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// chatFields are the top-level fields the chat completions API accepts.
var chatFields = fieldSet(
	"model", "messages", "audio", "frequency_penalty", "function_call", "functions",
	"logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
	"modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
	"prompt_cache_key", "prompt_cache_retention", "reasoning_effort", "response_format",
	"safety_identifier", "seed", "service_tier", "stop", "store", "stream",
	"stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p",
	"user", "verbosity", "web_search_options",
)

// chatRequest is what the chat completions handler needs from a request.
type chatRequest struct {
	turn
	includeUsage bool
}

// chatRoles are the message roles the chat completions API accepts.
var chatRoles = fieldSet("system", "developer", "user", "assistant", "tool", "function")

func isChatText(partType string) bool { return partType == "text" }

// readChat reads and validates a chat completions request.
func readChat(body string, strict bool) (*chatRequest, *apiError) {
	root, e := parseBody(body, dialectOpenAI)
	if e != nil {
		return nil, e
	}
	var model, messages, temperature, tools, toolChoice, stream, streamOptions gjson.Result
	unknown := ""
	root.ForEach(func(k, v gjson.Result) bool {
		switch name := k.String(); name {
		case "model":
			model = v
		case "messages":
			messages = v
		case "temperature":
			temperature = v
		case "tools":
			tools = v
		case "tool_choice":
			toolChoice = v
		case "stream":
			stream = v
		case "stream_options":
			streamOptions = v
		default:
			if strict && unknown == "" && !chatFields[name] {
				unknown = name
			}
		}
		return true
	})
	if unknown != "" {
		return nil, invalid("", "", "Unrecognized request argument supplied: %s", unknown)
	}
	req := &chatRequest{}
	if req.model, e = openAIModel(model); e != nil {
		return nil, e
	}
	if e = readChatMessages(messages, &req.turn); e != nil {
		return nil, e
	}
	if e = openAIRange("temperature", temperature, 0, 2); e != nil {
		return nil, e
	}
	if req.stream, e = openAIBool("stream", stream); e != nil {
		return nil, e
	}
	if !absent(streamOptions) {
		if !req.stream {
			return nil, invalid("stream_options", "invalid_value", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		req.includeUsage = streamOptions.Get("include_usage").Bool()
	}
	if e = readChatTools(tools, toolChoice, &req.turn); e != nil {
		return nil, e
	}
	return req, nil
}

// readChatMessages validates the messages and fills in the turn's texts.
// Like the real API it checks that tool messages answer the tool calls of
// the assistant message right before them, and that those calls are all
// answered before the conversation goes on.
func readChatMessages(messages gjson.Result, t *turn) *apiError {
	if absent(messages) {
		return invalid("messages", "missing_required_parameter", "Missing required parameter: 'messages'.")
	}
	if !messages.IsArray() {
		return invalid("messages", "invalid_type", "Invalid type for 'messages': expected an array, but got %s instead.", typeName(messages))
	}
	var (
		e          *apiError
		i          int
		lastUser   gjson.Result
		last       gjson.Result
		lastRole   string
		calls      toolIDs // the pending calls of the last assistant message
		callerAt   int
		inToolTurn bool
	)
	messages.ForEach(func(_, m gjson.Result) bool {
		if !m.IsObject() {
			e = invalid("messages["+strconv.Itoa(i)+"]", "invalid_type", "Invalid type for 'messages[%d]': expected an object, but got %s instead.", i, typeName(m))
			return false
		}
		var role, content, toolCallID, toolCalls gjson.Result
		m.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "role":
				role = v
			case "content":
				content = v
			case "tool_call_id":
				toolCallID = v
			case "tool_calls":
				toolCalls = v
			}
			return true
		})
		at := "messages[" + strconv.Itoa(i) + "]"
		r := role.String()
		if absent(role) {
			e = invalid(at+".role", "missing_required_parameter", "Missing required parameter: '%s.role'.", at)
			return false
		}
		if !chatRoles[r] {
			e = invalid(at+".role", "invalid_value", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", r)
			return false
		}
		// These params ("messages.[i]") and the word "preceeding" are spelled
		// as the real API spells them, so that its errors compare equal.
		if r == "tool" {
			if !inToolTurn {
				e = invalid("messages.["+strconv.Itoa(i)+"].role", "", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
				return false
			}
			if id := toolCallID.String(); !calls.answer(id) {
				e = invalid("messages.["+strconv.Itoa(i)+"].tool_call_id", "", "Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", id)
				return false
			}
		} else {
			if inToolTurn {
				if missing := calls.unanswered(); missing != "" {
					e = invalid("messages.["+strconv.Itoa(callerAt)+"].role", "", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", missing)
					return false
				}
			}
			inToolTurn = false
			if r == "assistant" && toolCalls.IsArray() {
				calls.reset()
				toolCalls.ForEach(func(_, c gjson.Result) bool {
					calls.add(c.Get("id").String())
					return true
				})
				inToolTurn = len(calls.order) > 0
				callerAt = i
			}
		}
		t.inputWords += contentWords(content, isChatText)
		if r == "user" {
			lastUser = content
		}
		last, lastRole = content, r
		i++
		return true
	})
	if e != nil {
		return e
	}
	if i == 0 {
		return invalid("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	t.userText = contentText(lastUser, isChatText)
	if lastRole == "tool" {
		t.endsWithToolResult = true
		t.toolResult = contentText(last, isChatText)
	}
	return nil
}

// readChatTools reads the function tools and tool_choice.
func readChatTools(tools, toolChoice gjson.Result, t *turn) *apiError {
	switch {
	case absent(tools):
	case !tools.IsArray():
		return invalid("tools", "invalid_type", "Invalid type for 'tools': expected an array, but got %s instead.", typeName(tools))
	case !tools.Get("0").Exists():
		return invalid("tools", "empty_array", "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	var e *apiError
	i := 0
	tools.ForEach(func(_, tl gjson.Result) bool {
		if typ := tl.Get("type"); absent(typ) || typ.String() == "function" {
			fn := tl.Get("function")
			name := fn.Get("name").String()
			if name == "" {
				e = invalid("tools["+strconv.Itoa(i)+"].function.name", "missing_required_parameter", "Missing required parameter: 'tools[%d].function.name'.", i)
				return false
			}
			t.tools = append(t.tools, tool{name: name, schema: fn.Get("parameters")})
		}
		i++
		return true
	})
	if e != nil {
		return e
	}
	return readOpenAIToolChoice(toolChoice, i > 0, "function.name", t)
}

// readOpenAIToolChoice reads an OpenAI tool_choice: "none", "auto",
// "required", or an object naming a function at namePath ("function.name"
// for chat completions, "name" for the Responses API).
func readOpenAIToolChoice(choice gjson.Result, haveTools bool, namePath string, t *turn) *apiError {
	if absent(choice) {
		return nil
	}
	if !haveTools {
		return invalid("tool_choice", "", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	switch {
	case choice.Type == gjson.String:
		switch choice.Str {
		case "none":
			t.toolsOff = true
		case "auto", "required":
		default:
			return invalid("tool_choice", "invalid_value", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", choice.Str)
		}
	case choice.IsObject():
		if choice.Get("type").String() != "function" {
			// Other choices (allowed_tools, hosted tools) leave the pick to the model.
			return nil
		}
		t.forced = choice.Get(namePath).String()
		if t.forced == "" {
			return invalid("tool_choice."+namePath, "missing_required_parameter", "Missing required parameter: 'tool_choice.%s'.", namePath)
		}
		for _, tl := range t.tools {
			if tl.name == t.forced {
				return nil
			}
		}
		return invalid("tool_choice", "invalid_value", "Invalid value for 'tool_choice': function '%s' is not among the 'tools'.", t.forced)
	default:
		return invalid("tool_choice", "invalid_type", "Invalid type for 'tool_choice': expected a string or an object, but got %s instead.", typeName(choice))
	}
	return nil
}

// openAIModel checks the required model field.
func openAIModel(model gjson.Result) (string, *apiError) {
	switch {
	case absent(model):
		return "", invalid("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	case model.Type != gjson.String:
		return "", invalid("model", "invalid_type", "Invalid type for 'model': expected a string, but got %s instead.", typeName(model))
	case model.Str == "":
		return "", invalid("model", "invalid_value", "Invalid value for 'model': expected a non-empty string.")
	}
	return model.Str, nil
}

// openAIRange checks an optional number field against its bounds.
func openAIRange(name string, v gjson.Result, lo, hi float64) *apiError {
	switch {
	case absent(v):
		return nil
	case v.Type != gjson.Number:
		return invalid(name, "invalid_type", "Invalid type for '%s': expected a decimal, but got %s instead.", name, typeName(v))
	case v.Num < lo:
		return invalid(name, "decimal_below_min_value", "Invalid '%s': decimal below minimum value. Expected a value >= %s, but got %s instead.", name, strconv.FormatFloat(lo, 'g', -1, 64), v.Raw)
	case v.Num > hi:
		return invalid(name, "decimal_above_max_value", "Invalid '%s': decimal above maximum value. Expected a value <= %s, but got %s instead.", name, strconv.FormatFloat(hi, 'g', -1, 64), v.Raw)
	}
	return nil
}

// openAIBool reads an optional boolean field.
func openAIBool(name string, v gjson.Result) (bool, *apiError) {
	switch {
	case absent(v):
		return false, nil
	case v.Type != gjson.True && v.Type != gjson.False:
		return false, invalid(name, "invalid_type", "Invalid type for '%s': expected a boolean, but got %s instead.", name, typeName(v))
	}
	return v.Bool(), nil
}

// chatCompletions serves POST .../chat/completions.
func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request, body string) {
	req, e := readChat(body, s.cfg.Strict)
	if e != nil {
		writeError(w, r, dialectOpenAI, e)
		return
	}
	rep := answer(&req.turn)
	if !hold(w, r, dialectOpenAI, &rep) {
		return
	}
	c := chatReply{id: newChatID(), created: time.Now().Unix(), model: req.model, rep: &rep}
	if req.stream {
		c.stream(w, req.includeUsage)
		return
	}
	bp := getBuffer()
	defer putBuffer(bp)
	*bp = c.appendCompletion((*bp)[:0])
	writeJSON(w, r, http.StatusOK, *bp)
}

// chatReply writes a reply in the chat completions shapes.
type chatReply struct {
	id      string
	created int64
	model   string
	rep     *reply
}

func (c *chatReply) finishReason() string {
	if c.rep.call != nil {
		return "tool_calls"
	}
	return "stop"
}

// appendCompletion appends the non-streamed chat.completion object.
func (c *chatReply) appendCompletion(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, c.model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if call := c.rep.call; call != nil {
		b = append(b, `null,"tool_calls":[{"id":`...)
		b = appendString(b, "call_"+call.digest)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = appendString(b, call.name)
		b = append(b, `,"arguments":`...)
		b = appendString(b, call.arguments)
		b = append(b, `}}]`...)
	} else {
		b = appendString(b, c.rep.text)
	}
	b = append(b, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":`...)
	b = appendString(b, c.finishReason())
	b = append(b, `}],"usage":`...)
	b = c.appendUsage(b)
	return append(b, `,"service_tier":"default","system_fingerprint":null}`...)
}

func (c *chatReply) appendUsage(b []byte) []byte {
	// OpenAI counts every prompt token in prompt_tokens and the ones read
	// from its cache again in cached_tokens; cache writes cost nothing extra.
	in := c.rep.inputTokens + c.rep.cacheRead + c.rep.cacheWrite
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, in)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, c.rep.outputTokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, in+c.rep.outputTokens)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, c.rep.cacheRead)
	return append(b, `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
}

// stream writes the reply as chat.completion.chunk events: the role chunk,
// one chunk per content piece, the finish chunk, the usage chunk when asked
// for, and [DONE]. With include_usage every chunk carries "usage":null
// until the last, as the real API sends them.
func (c *chatReply) stream(w http.ResponseWriter, includeUsage bool) {
	es := openStream(w, c.rep.cut)
	head := []byte(`{"id":`)
	head = appendString(head, c.id)
	head = append(head, `,"object":"chat.completion.chunk","created":`...)
	head = strconv.AppendInt(head, c.created, 10)
	head = append(head, `,"model":`...)
	head = appendString(head, c.model)
	head = append(head, `,"service_tier":"default","system_fingerprint":null,"choices":[`...)
	tail := `]}`
	if includeUsage {
		tail = `],"usage":null}`
	}
	var b []byte
	chunk := func(delta []byte, finish string) []byte {
		b = append(b[:0], head...)
		b = append(b, `{"index":0,"delta":`...)
		b = append(b, delta...)
		b = append(b, `,"logprobs":null,"finish_reason":`...)
		if finish == "" {
			b = append(b, "null"...)
		} else {
			b = appendString(b, finish)
		}
		b = append(b, '}')
		return append(b, tail...)
	}
	var d []byte
	if call := c.rep.call; call != nil {
		d = append(d[:0], `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":`...)
		d = appendString(d, "call_"+call.digest)
		d = append(d, `,"type":"function","function":{"name":`...)
		d = appendString(d, call.name)
		d = append(d, `,"arguments":""}}],"refusal":null}`...)
		es.emit("", chunk(d, ""))
		for _, f := range fragments(call.arguments) {
			d = append(d[:0], `{"tool_calls":[{"index":0,"function":{"arguments":`...)
			d = appendString(d, f)
			d = append(d, `}}]}`...)
			es.piece("", chunk(d, ""))
		}
	} else {
		es.emit("", chunk([]byte(`{"role":"assistant","content":"","refusal":null}`), ""))
		for _, p := range pieces(c.rep.text) {
			d = append(d[:0], `{"content":`...)
			d = appendString(d, p)
			d = append(d, '}')
			es.piece("", chunk(d, ""))
		}
	}
	es.endPieces()
	es.emit("", chunk([]byte(`{}`), c.finishReason()))
	if includeUsage {
		b = append(b[:0], head...)
		b = append(b, `],"usage":`...)
		b = c.appendUsage(b)
		es.emit("", append(b, '}'))
	}
	es.emit("", []byte("[DONE]"))
}
