package translate

import (
	"github.com/tidwall/gjson"
)

var (
	messageRoles     = []string{"user", "assistant", "system"}
	systemBlockTypes = []string{"text"}
	imageSourceTypes = []string{"base64", "url"}
	toolChoiceTypes  = []string{"auto", "any", "tool"}
)

// messagesFields are the members of a messages request that the gateway
// reads or validates.
type messagesFields struct {
	model, messages, maxTokens, system, temperature, topP gjson.Result
	topK, stopSequences, tools, toolChoice                gjson.Result
	deliveryFields
}

func (f *messagesFields) field(key string) *gjson.Result {
	switch key {
	case "model":
		return &f.model
	case "messages":
		return &f.messages
	case "max_tokens":
		return &f.maxTokens
	case "system":
		return &f.system
	case "temperature":
		return &f.temperature
	case "top_p":
		return &f.topP
	case "top_k":
		return &f.topK
	case "stop_sequences":
		return &f.stopSequences
	case "tools":
		return &f.tools
	case "tool_choice":
		return &f.toolChoice
	}
	return f.deliveryFields.field(key)
}

// ParseMessages validates a messages request body (SPEC 2.5 and 8) and
// returns what the gateway needs from it. The error is the first violation,
// checked in the order of the SPEC's field table; members the contract does
// not name pass through unvalidated.
func ParseMessages(body []byte) (Request, *ValidationError) {
	req := Request{Dialect: Messages}
	root, err := parseBody(body)
	if err != nil {
		return Request{Dialect: Messages}, err
	}
	var f messagesFields
	var dup *ValidationError
	root.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return Request{Dialect: Messages}, dup
	}
	if err := f.read(&req); err != nil {
		return Request{Dialect: Messages}, err
	}
	return req, nil
}

func (f *messagesFields) read(req *Request) *ValidationError {
	if err := readModel(f.model, req); err != nil {
		return err
	}
	var err *ValidationError
	if req.Messages, err = validateMessagesList(f.messages); err != nil {
		return err
	}
	if err := reqInteger("max_tokens", f.maxTokens, 1); err != nil {
		return err
	}
	if err := validateSystem(f.system); err != nil {
		return err
	}
	if err := optNumber("temperature", f.temperature, 0, 2); err != nil {
		return err
	}
	if err := optNumber("top_p", f.topP, 0, 1); err != nil {
		return err
	}
	if err := optInteger("top_k", f.topK, 0); err != nil {
		return err
	}
	if err := optStringArray("stop_sequences", f.stopSequences, 0); err != nil {
		return err
	}
	if err := f.readStream(req); err != nil {
		return err
	}
	if req.Tools, err = validateMessagesTools(f.tools); err != nil {
		return err
	}
	if err := validateToolChoice(f.toolChoice); err != nil {
		return err
	}
	return f.readRest(req)
}

// validateMessagesList checks the messages and returns how many there are.
func validateMessagesList(v gjson.Result) (int, *ValidationError) {
	if absent(v) {
		return 0, missing("messages")
	}
	if !v.IsArray() {
		return 0, invalid("messages", "must be an array of messages")
	}
	n, err := eachItem(v, validateMessage)
	if err != nil {
		return 0, under("messages", err)
	}
	if n == 0 {
		return 0, invalid("messages", "must have at least 1 item")
	}
	return n, nil
}

// messageFields are the members of one message.
type messageFields struct {
	role, content gjson.Result
}

func (f *messageFields) field(key string) *gjson.Result {
	switch key {
	case "role":
		return &f.role
	case "content":
		return &f.content
	}
	return nil
}

func validateMessage(msg gjson.Result) *ValidationError {
	if !msg.IsObject() {
		return invalid("", "must be a message object")
	}
	var f messageFields
	var dup *ValidationError
	msg.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if _, err := reqEnum("role", f.role, messageRoles); err != nil {
		return err
	}
	switch {
	case absent(f.content):
		return missing("content")
	case f.content.Type == gjson.String:
		return nil
	case f.content.IsArray():
		_, err := eachItem(f.content, validateBlock)
		return under("content", err)
	}
	return invalid("content", "must be a string or an array of content blocks")
}

// blockFields are the members of a request content block, whatever its type.
type blockFields struct {
	typ, text, source, id, name, input, toolUseID, content, isError gjson.Result
}

func (f *blockFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "text":
		return &f.text
	case "source":
		return &f.source
	case "id":
		return &f.id
	case "name":
		return &f.name
	case "input":
		return &f.input
	case "tool_use_id":
		return &f.toolUseID
	case "content":
		return &f.content
	case "is_error":
		return &f.isError
	}
	return nil
}

// validateBlock checks one request content block (SPEC 2.5). The four
// block types the contract shows are validated as it states; blocks of other
// types pass through unvalidated, because assistant turns in this shape carry
// blocks the gateway does not read and the upstream requires back as they
// were sent (thinking blocks with their signatures in a tool-use loop, server
// tool calls and their results).
func validateBlock(block gjson.Result) *ValidationError {
	if !block.IsObject() {
		return invalid("", "must be a content block object")
	}
	var f blockFields
	var dup *ValidationError
	block.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if err := reqString("type", f.typ); err != nil {
		return err
	}
	switch f.typ.Str {
	case "text":
		return reqString("text", f.text)
	case "image":
		return under("source", validateImageSource(f.source))
	case "tool_use":
		if err := reqString("id", f.id); err != nil {
			return err
		}
		if err := reqString("name", f.name); err != nil {
			return err
		}
		return optObject("input", f.input)
	case "tool_result":
		if err := reqString("tool_use_id", f.toolUseID); err != nil {
			return err
		}
		switch {
		case absent(f.content), f.content.Type == gjson.String:
		case f.content.IsArray():
			if _, err := eachItem(f.content, validateBlock); err != nil {
				return under("content", err)
			}
		default:
			return invalid("content", "must be a string or an array of content blocks")
		}
		return optBool("is_error", f.isError)
	}
	return nil
}

// sourceFields are the members of an image block's source.
type sourceFields struct {
	typ, mediaType, data, url gjson.Result
}

func (f *sourceFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "media_type":
		return &f.mediaType
	case "data":
		return &f.data
	case "url":
		return &f.url
	}
	return nil
}

// validateImageSource checks an image block's source; params are relative
// to the source.
func validateImageSource(v gjson.Result) *ValidationError {
	if absent(v) {
		return missing("")
	}
	if !v.IsObject() {
		return invalid("", "must be an object")
	}
	var f sourceFields
	var dup *ValidationError
	v.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	typ, err := reqEnum("type", f.typ, imageSourceTypes)
	if err != nil {
		return err
	}
	if err := optString("media_type", f.mediaType); err != nil {
		return err
	}
	if typ == "base64" {
		return reqString("data", f.data)
	}
	if err := reqString("url", f.url); err != nil {
		return err
	}
	if !absoluteURI(f.url.Str) {
		return invalid("url", "must be an absolute URI, such as an https URL")
	}
	return nil
}

// validateSystem checks the system prompt: a string or an array of text
// blocks.
func validateSystem(v gjson.Result) *ValidationError {
	switch {
	case absent(v), v.Type == gjson.String:
		return nil
	case v.IsArray():
		_, err := eachItem(v, validateSystemBlock)
		return under("system", err)
	}
	return invalid("system", "must be a string or an array of text blocks")
}

func validateSystemBlock(block gjson.Result) *ValidationError {
	if !block.IsObject() {
		return invalid("", "must be a text block object")
	}
	var f blockFields
	var dup *ValidationError
	block.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if _, err := reqEnum("type", f.typ, systemBlockTypes); err != nil {
		return err
	}
	return reqString("text", f.text)
}

// messagesToolFields are the members of a messages tool.
type messagesToolFields struct {
	name, description, inputSchema gjson.Result
}

func (f *messagesToolFields) field(key string) *gjson.Result {
	switch key {
	case "name":
		return &f.name
	case "description":
		return &f.description
	case "input_schema":
		return &f.inputSchema
	}
	return nil
}

// validateMessagesTools checks the tools and returns how many there are.
func validateMessagesTools(v gjson.Result) (int, *ValidationError) {
	if absent(v) {
		return 0, nil
	}
	if !v.IsArray() {
		return 0, invalid("tools", "must be an array of tools")
	}
	n, err := eachItem(v, validateMessagesTool)
	return n, under("tools", err)
}

func validateMessagesTool(tool gjson.Result) *ValidationError {
	if !tool.IsObject() {
		return invalid("", "must be a tool object")
	}
	var f messagesToolFields
	var dup *ValidationError
	tool.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if err := reqString("name", f.name); err != nil {
		return err
	}
	if err := optString("description", f.description); err != nil {
		return err
	}
	return optObject("input_schema", f.inputSchema)
}

// toolChoiceFields are the members of a messages tool_choice.
type toolChoiceFields struct {
	typ, name gjson.Result
}

func (f *toolChoiceFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "name":
		return &f.name
	}
	return nil
}

// validateToolChoice checks tool_choice: its type, and the tool's name when
// the type forces one tool.
func validateToolChoice(v gjson.Result) *ValidationError {
	if absent(v) {
		return nil
	}
	if !v.IsObject() {
		return invalid("tool_choice", "must be an object")
	}
	var f toolChoiceFields
	var dup *ValidationError
	v.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return under("tool_choice", dup)
	}
	typ, err := reqEnum("type", f.typ, toolChoiceTypes)
	if err != nil {
		return under("tool_choice", err)
	}
	if typ == "tool" {
		return under("tool_choice", reqString("name", f.name))
	}
	return under("tool_choice", optString("name", f.name))
}
