package demoupstream

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// responsesFields are the top-level fields the Responses API accepts.
var responsesFields = fieldSet(
	"model", "input", "background", "conversation", "include", "instructions",
	"max_output_tokens", "max_tool_calls", "metadata", "parallel_tool_calls",
	"previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_retention",
	"reasoning", "safety_identifier", "service_tier", "store", "stream",
	"stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs",
	"top_p", "truncation", "user",
)

// responsesRequest is what the Responses handler needs from a request:
// the turn, and the fields a Response object echoes back.
type responsesRequest struct {
	turn
	instructions, maxOutputTokens, metadata, parallelToolCalls gjson.Result
	previousResponseID, store, temperature, text, toolChoice   gjson.Result
	toolsRaw, topP, truncation, user                           gjson.Result
}

func isResponsesText(partType string) bool {
	return partType == "input_text" || partType == "output_text"
}

// readResponses reads and validates a Responses API request.
func readResponses(body string, strict bool) (*responsesRequest, *apiError) {
	root, e := parseBody(body, dialectOpenAI)
	if e != nil {
		return nil, e
	}
	req := &responsesRequest{}
	var model, input, stream gjson.Result
	unknown := ""
	root.ForEach(func(k, v gjson.Result) bool {
		switch name := k.String(); name {
		case "model":
			model = v
		case "input":
			input = v
		case "stream":
			stream = v
		case "instructions":
			req.instructions = v
		case "max_output_tokens":
			req.maxOutputTokens = v
		case "metadata":
			req.metadata = v
		case "parallel_tool_calls":
			req.parallelToolCalls = v
		case "previous_response_id":
			req.previousResponseID = v
		case "store":
			req.store = v
		case "temperature":
			req.temperature = v
		case "text":
			req.text = v
		case "tool_choice":
			req.toolChoice = v
		case "tools":
			req.toolsRaw = v
		case "top_p":
			req.topP = v
		case "truncation":
			req.truncation = v
		case "user":
			req.user = v
		default:
			if strict && unknown == "" && !responsesFields[name] {
				unknown = name
			}
		}
		return true
	})
	if unknown != "" {
		return nil, invalid("", "", "Unrecognized request argument supplied: %s", unknown)
	}
	if req.model, e = openAIModel(model); e != nil {
		return nil, e
	}
	if req.instructions.Type == gjson.String {
		req.inputWords += countWords(req.instructions.Str)
	}
	if e = readResponsesInput(input, !absent(req.previousResponseID), &req.turn); e != nil {
		return nil, e
	}
	if e = openAIRange("temperature", req.temperature, 0, 2); e != nil {
		return nil, e
	}
	if req.stream, e = openAIBool("stream", stream); e != nil {
		return nil, e
	}
	if e = readResponsesTools(req.toolsRaw, req.toolChoice, &req.turn); e != nil {
		return nil, e
	}
	return req, nil
}

// readResponsesInput reads input: a string, or a list of items of which
// messages, function calls and function call outputs matter here. Without
// previous_response_id, every function_call_output must answer a
// function_call earlier in the input, as the real API requires.
func readResponsesInput(input gjson.Result, continues bool, t *turn) *apiError {
	switch {
	case absent(input):
		return invalid("input", "missing_required_parameter", "Missing required parameter: 'input'.")
	case input.Type == gjson.String:
		t.userText = input.Str
		t.inputWords += countWords(input.Str)
		return nil
	case !input.IsArray():
		return invalid("input", "invalid_type", "Invalid type for 'input': expected a string or an array, but got %s instead.", typeName(input))
	}
	var (
		e        *apiError
		i        int
		lastUser gjson.Result
		last     gjson.Result
		lastType string
		calls    toolIDs
	)
	input.ForEach(func(_, item gjson.Result) bool {
		at := "input[" + strconv.Itoa(i) + "]"
		if !item.IsObject() {
			e = invalid(at, "invalid_type", "Invalid type for '%s': expected an object, but got %s instead.", at, typeName(item))
			return false
		}
		var typ, role, content, callID, output gjson.Result
		item.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "type":
				typ = v
			case "role":
				role = v
			case "content":
				content = v
			case "call_id":
				callID = v
			case "output":
				output = v
			}
			return true
		})
		kind := typ.String()
		if kind == "" && role.Exists() {
			kind = "message"
		}
		switch kind {
		case "message":
			switch r := role.String(); r {
			case "user", "assistant", "system", "developer":
				if r == "user" {
					lastUser = content
				}
			default:
				e = invalid(at+".role", "invalid_value", "Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", r)
				return false
			}
			t.inputWords += contentWords(content, isResponsesText)
		case "function_call":
			calls.add(callID.String())
		case "function_call_output":
			if !continues && !calls.answer(callID.String()) {
				e = invalid("input", "", "No tool call found for function call output with call_id %s.", callID.String())
				return false
			}
			t.inputWords += contentWords(output, isResponsesText)
		}
		last, lastType = item, kind
		i++
		return true
	})
	if e != nil {
		return e
	}
	if i == 0 {
		return invalid("input", "empty_array", "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	t.userText = contentText(lastUser, isResponsesText)
	if lastType == "function_call_output" {
		t.endsWithToolResult = true
		t.toolResult = contentText(last.Get("output"), isResponsesText)
	}
	return nil
}

// readResponsesTools reads the function tools (hosted tools such as
// web_search are never called) and tool_choice.
func readResponsesTools(tools, toolChoice gjson.Result, t *turn) *apiError {
	if !absent(tools) && !tools.IsArray() {
		return invalid("tools", "invalid_type", "Invalid type for 'tools': expected an array, but got %s instead.", typeName(tools))
	}
	var e *apiError
	i := 0
	tools.ForEach(func(_, tl gjson.Result) bool {
		if tl.Get("type").String() == "function" {
			name := tl.Get("name").String()
			if name == "" {
				e = invalid("tools["+strconv.Itoa(i)+"].name", "missing_required_parameter", "Missing required parameter: 'tools[%d].name'.", i)
				return false
			}
			t.tools = append(t.tools, tool{name: name, schema: tl.Get("parameters")})
		}
		i++
		return true
	})
	if e != nil {
		return e
	}
	return readOpenAIToolChoice(toolChoice, i > 0, "name", t)
}

// responses serves POST .../responses.
func (s *server) responses(w http.ResponseWriter, r *http.Request, body string) {
	req, e := readResponses(body, s.cfg.Strict)
	if e != nil {
		writeError(w, r, dialectOpenAI, e)
		return
	}
	rep := answer(&req.turn)
	if !hold(w, r, dialectOpenAI, &rep) {
		return
	}
	c := responsesReply{id: newResponseID(), created: time.Now().Unix(), req: req, rep: &rep}
	if rep.call != nil {
		c.itemID = newItemID("fc_")
	} else {
		c.itemID = newItemID("msg_")
	}
	if req.stream {
		c.stream(w)
		return
	}
	bp := getBuffer()
	defer putBuffer(bp)
	*bp = c.appendResponse((*bp)[:0], true)
	writeJSON(w, r, http.StatusOK, *bp)
}

// responsesReply writes a reply in the Responses API shapes.
type responsesReply struct {
	id      string
	itemID  string
	created int64
	req     *responsesRequest
	rep     *reply
}

// appendResponse appends the Response object: completed, with its output
// and usage, or in progress with neither, as the first stream events carry it.
func (c *responsesReply) appendResponse(b []byte, completed bool) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, c.created, 10)
	if completed {
		b = append(b, `,"status":"completed"`...)
	} else {
		b = append(b, `,"status":"in_progress"`...)
	}
	b = append(b, `,"background":false,"error":null,"incomplete_details":null,"instructions":`...)
	b = appendEcho(b, c.req.instructions, "null")
	b = append(b, `,"max_output_tokens":`...)
	b = appendEcho(b, c.req.maxOutputTokens, "null")
	b = append(b, `,"model":`...)
	b = appendString(b, c.req.model)
	b = append(b, `,"output":[`...)
	if completed {
		b = c.appendItem(b, true)
	}
	b = append(b, `],"parallel_tool_calls":`...)
	b = appendEcho(b, c.req.parallelToolCalls, "true")
	b = append(b, `,"previous_response_id":`...)
	b = appendEcho(b, c.req.previousResponseID, "null")
	b = append(b, `,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":`...)
	b = appendEcho(b, c.req.store, "true")
	b = append(b, `,"temperature":`...)
	b = appendEcho(b, c.req.temperature, "1.0")
	b = append(b, `,"text":`...)
	b = appendEcho(b, c.req.text, `{"format":{"type":"text"}}`)
	b = append(b, `,"tool_choice":`...)
	b = appendEcho(b, c.req.toolChoice, `"auto"`)
	b = append(b, `,"tools":`...)
	b = appendEcho(b, c.req.toolsRaw, "[]")
	b = append(b, `,"top_p":`...)
	b = appendEcho(b, c.req.topP, "1.0")
	b = append(b, `,"truncation":`...)
	b = appendEcho(b, c.req.truncation, `"disabled"`)
	b = append(b, `,"usage":`...)
	if completed {
		in := c.rep.inputTokens + c.rep.cacheRead + c.rep.cacheWrite
		b = append(b, `{"input_tokens":`...)
		b = appendInt(b, in)
		b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
		b = appendInt(b, c.rep.cacheRead)
		b = append(b, `},"output_tokens":`...)
		b = appendInt(b, c.rep.outputTokens)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
		b = appendInt(b, in+c.rep.outputTokens)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"user":`...)
	b = appendEcho(b, c.req.user, "null")
	b = append(b, `,"metadata":`...)
	b = appendEcho(b, c.req.metadata, "{}")
	return append(b, '}')
}

// appendItem appends the output item: a message, or a function_call when
// the model calls a tool. An unfinished item has no content or arguments yet.
func (c *responsesReply) appendItem(b []byte, done bool) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.itemID)
	if call := c.rep.call; call != nil {
		b = append(b, `,"type":"function_call","status":`...)
		b = appendStatus(b, done)
		b = append(b, `,"arguments":`...)
		if done {
			b = appendString(b, call.arguments)
		} else {
			b = append(b, `""`...)
		}
		b = append(b, `,"call_id":`...)
		b = appendString(b, "call_"+call.digest)
		b = append(b, `,"name":`...)
		b = appendString(b, call.name)
		return append(b, '}')
	}
	b = append(b, `,"type":"message","status":`...)
	b = appendStatus(b, done)
	b = append(b, `,"content":[`...)
	if done {
		b = appendTextPart(b, c.rep.text)
	}
	return append(b, `],"role":"assistant"}`...)
}

func appendStatus(b []byte, done bool) []byte {
	if done {
		return append(b, `"completed"`...)
	}
	return append(b, `"in_progress"`...)
}

// appendTextPart appends an output_text content part.
func appendTextPart(b []byte, text string) []byte {
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// responsesStream numbers the events of a Responses stream.
type responsesStream struct {
	es  *eventStream
	seq int
	b   []byte
}

// start begins an event's data: its type and sequence number.
func (s *responsesStream) start(name string) []byte {
	b := append(s.b[:0], `{"type":"`...)
	b = append(b, name...)
	b = append(b, `","sequence_number":`...)
	return appendInt(b, s.seq)
}

// send ends and writes an event begun with start; a content piece goes
// through the cut directive's check.
func (s *responsesStream) send(name string, b []byte, piece bool) {
	b = append(b, '}')
	s.b = b
	if piece {
		s.es.piece(name, b)
	} else {
		s.es.emit(name, b)
	}
	s.seq++
}

// stream writes the reply as the Responses API's event sequence:
// response.created, response.in_progress, the output item's events, and
// response.completed carrying the whole response with its usage.
func (c *responsesReply) stream(w http.ResponseWriter) {
	s := &responsesStream{es: openStream(w, c.rep.cut)}
	for _, name := range []string{"response.created", "response.in_progress"} {
		b := s.start(name)
		b = append(b, `,"response":`...)
		b = c.appendResponse(b, false)
		s.send(name, b, false)
	}
	b := s.start("response.output_item.added")
	b = append(b, `,"output_index":0,"item":`...)
	b = c.appendItem(b, false)
	s.send("response.output_item.added", b, false)
	if call := c.rep.call; call != nil {
		for _, f := range fragments(call.arguments) {
			b = s.start("response.function_call_arguments.delta")
			b = c.appendItemRef(b, false)
			b = append(b, `,"delta":`...)
			b = appendString(b, f)
			s.send("response.function_call_arguments.delta", b, true)
		}
		s.es.endPieces()
		b = s.start("response.function_call_arguments.done")
		b = c.appendItemRef(b, false)
		b = append(b, `,"arguments":`...)
		b = appendString(b, call.arguments)
		s.send("response.function_call_arguments.done", b, false)
	} else {
		b = s.start("response.content_part.added")
		b = c.appendItemRef(b, true)
		b = append(b, `,"part":`...)
		b = appendTextPart(b, "")
		s.send("response.content_part.added", b, false)
		for _, p := range pieces(c.rep.text) {
			b = s.start("response.output_text.delta")
			b = c.appendItemRef(b, true)
			b = append(b, `,"delta":`...)
			b = appendString(b, p)
			b = append(b, `,"logprobs":[]`...)
			s.send("response.output_text.delta", b, true)
		}
		s.es.endPieces()
		b = s.start("response.output_text.done")
		b = c.appendItemRef(b, true)
		b = append(b, `,"text":`...)
		b = appendString(b, c.rep.text)
		b = append(b, `,"logprobs":[]`...)
		s.send("response.output_text.done", b, false)
		b = s.start("response.content_part.done")
		b = c.appendItemRef(b, true)
		b = append(b, `,"part":`...)
		b = appendTextPart(b, c.rep.text)
		s.send("response.content_part.done", b, false)
	}
	b = s.start("response.output_item.done")
	b = append(b, `,"output_index":0,"item":`...)
	b = c.appendItem(b, true)
	s.send("response.output_item.done", b, false)
	b = s.start("response.completed")
	b = append(b, `,"response":`...)
	b = c.appendResponse(b, true)
	s.send("response.completed", b, false)
}

// appendItemRef appends the fields that point an event at the output item
// (and at its only content part, for text events).
func (c *responsesReply) appendItemRef(b []byte, part bool) []byte {
	b = append(b, `,"item_id":`...)
	b = appendString(b, c.itemID)
	b = append(b, `,"output_index":0`...)
	if part {
		b = append(b, `,"content_index":0`...)
	}
	return b
}
