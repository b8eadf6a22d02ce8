package translate

import (
	"github.com/tidwall/gjson"
)

var (
	chatRoles     = []string{"system", "developer", "user", "assistant", "tool"}
	chatToolTypes = []string{"function"}
)

// chatFields are the members of a chat-completions request that the gateway
// reads or validates.
type chatFields struct {
	model, messages, temperature, topP, maxTokens, maxCompletionTokens  gjson.Result
	stop, presencePenalty, frequencyPenalty, user, streamOptions, tools gjson.Result
	deliveryFields
}

func (f *chatFields) field(key string) *gjson.Result {
	switch key {
	case "model":
		return &f.model
	case "messages":
		return &f.messages
	case "temperature":
		return &f.temperature
	case "top_p":
		return &f.topP
	case "max_tokens":
		return &f.maxTokens
	case "max_completion_tokens":
		return &f.maxCompletionTokens
	case "stop":
		return &f.stop
	case "presence_penalty":
		return &f.presencePenalty
	case "frequency_penalty":
		return &f.frequencyPenalty
	case "user":
		return &f.user
	case "stream_options":
		return &f.streamOptions
	case "tools":
		return &f.tools
	}
	return f.deliveryFields.field(key)
}

// ParseChat validates a chat-completions request body (SPEC 2.3 and 8) and
// returns what the gateway needs from it. The error is the first violation,
// checked in the order of the SPEC's field table; members the contract does
// not name pass through unvalidated.
func ParseChat(body []byte) (Request, *ValidationError) {
	req := Request{Dialect: Chat}
	root, err := parseBody(body)
	if err != nil {
		return Request{Dialect: Chat}, err
	}
	var f chatFields
	var dup *ValidationError
	root.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return Request{Dialect: Chat}, dup
	}
	if err := f.read(&req); err != nil {
		return Request{Dialect: Chat}, err
	}
	return req, nil
}

func (f *chatFields) read(req *Request) *ValidationError {
	if err := readModel(f.model, req); err != nil {
		return err
	}
	var err *ValidationError
	if req.Messages, err = validateChatMessages(f.messages); err != nil {
		return err
	}
	if err := optNumber("temperature", f.temperature, 0, 2); err != nil {
		return err
	}
	if err := optNumber("top_p", f.topP, 0, 1); err != nil {
		return err
	}
	if err := optInteger("max_tokens", f.maxTokens, 1); err != nil {
		return err
	}
	if err := optInteger("max_completion_tokens", f.maxCompletionTokens, 1); err != nil {
		return err
	}
	if err := f.readStream(req); err != nil {
		return err
	}
	req.IncludeUsage = f.streamOptions.IsObject() && f.streamOptions.Get("include_usage").Type == gjson.True
	if err := validateStop(f.stop); err != nil {
		return err
	}
	if err := optNumber("presence_penalty", f.presencePenalty, -2, 2); err != nil {
		return err
	}
	if err := optNumber("frequency_penalty", f.frequencyPenalty, -2, 2); err != nil {
		return err
	}
	if err := readUser(f.user, req); err != nil {
		return err
	}
	if req.Tools, err = validateChatTools(f.tools); err != nil {
		return err
	}
	return f.readRest(req)
}

// validateStop checks chat's stop: one string, or an array of at most four,
// which is what chat-completions upstreams accept.
func validateStop(v gjson.Result) *ValidationError {
	if v.Type == gjson.String {
		return nil
	}
	if !absent(v) && !v.IsArray() {
		return invalid("stop", "must be a string or an array of strings")
	}
	return optStringArray("stop", v, 4)
}

// validateChatMessages checks the messages and returns how many there are.
func validateChatMessages(v gjson.Result) (int, *ValidationError) {
	if absent(v) {
		return 0, missing("messages")
	}
	if !v.IsArray() {
		return 0, invalid("messages", "must be an array of messages")
	}
	n, err := eachItem(v, validateChatMessage)
	if err != nil {
		return 0, under("messages", err)
	}
	if n == 0 {
		return 0, invalid("messages", "must have at least 1 item")
	}
	return n, nil
}

// chatMessageFields are the members of a ChatMessage.
type chatMessageFields struct {
	role, content, name, toolCallID, toolCalls gjson.Result
}

func (f *chatMessageFields) field(key string) *gjson.Result {
	switch key {
	case "role":
		return &f.role
	case "content":
		return &f.content
	case "name":
		return &f.name
	case "tool_call_id":
		return &f.toolCallID
	case "tool_calls":
		return &f.toolCalls
	}
	return nil
}

func validateChatMessage(msg gjson.Result) *ValidationError {
	if !msg.IsObject() {
		return invalid("", "must be a message object")
	}
	var f chatMessageFields
	var dup *ValidationError
	msg.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if _, err := reqEnum("role", f.role, chatRoles); err != nil {
		return err
	}
	switch {
	case absent(f.content), f.content.Type == gjson.String:
	case f.content.IsArray():
		if _, err := eachItem(f.content, validateChatPart); err != nil {
			return under("content", err)
		}
	default:
		return invalid("content", "must be a string, an array of content parts or null")
	}
	if err := optString("name", f.name); err != nil {
		return err
	}
	if err := optString("tool_call_id", f.toolCallID); err != nil {
		return err
	}
	if !absent(f.toolCalls) && !f.toolCalls.IsArray() {
		return invalid("tool_calls", "must be an array")
	}
	return nil
}

// chatToolFields are the members of a chat tool and of its function.
type chatToolFields struct {
	typ, function gjson.Result
}

func (f *chatToolFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "function":
		return &f.function
	}
	return nil
}

type functionFields struct {
	name, description, parameters gjson.Result
}

func (f *functionFields) field(key string) *gjson.Result {
	switch key {
	case "name":
		return &f.name
	case "description":
		return &f.description
	case "parameters":
		return &f.parameters
	}
	return nil
}

// validateChatTools checks the tools and returns how many there are.
func validateChatTools(v gjson.Result) (int, *ValidationError) {
	if absent(v) {
		return 0, nil
	}
	if !v.IsArray() {
		return 0, invalid("tools", "must be an array of tools")
	}
	n, err := eachItem(v, validateChatTool)
	return n, under("tools", err)
}

func validateChatTool(tool gjson.Result) *ValidationError {
	if !tool.IsObject() {
		return invalid("", "must be a tool object")
	}
	var f chatToolFields
	var dup *ValidationError
	tool.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if _, err := reqEnum("type", f.typ, chatToolTypes); err != nil {
		return err
	}
	if absent(f.function) {
		return missing("function")
	}
	if !f.function.IsObject() {
		return invalid("function", "must be an object")
	}
	var fn functionFields
	f.function.ForEach(func(k, v gjson.Result) bool { return keep(fn.field(k.Str), k, v, &dup) })
	if dup != nil {
		return under("function", dup)
	}
	if err := reqString("function.name", fn.name); err != nil {
		return err
	}
	if err := optString("function.description", fn.description); err != nil {
		return err
	}
	return optObject("function.parameters", fn.parameters)
}
