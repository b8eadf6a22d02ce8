package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// responsesFields are the members of a responses request that the gateway
// reads or validates.
type responsesFields struct {
	model, input, instructions, tools, temperature, topP gjson.Result
	maxOutputTokens, parallelToolCalls, user             gjson.Result
	deliveryFields
}

func (f *responsesFields) field(key string) *gjson.Result {
	switch key {
	case "model":
		return &f.model
	case "input":
		return &f.input
	case "instructions":
		return &f.instructions
	case "tools":
		return &f.tools
	case "temperature":
		return &f.temperature
	case "top_p":
		return &f.topP
	case "max_output_tokens":
		return &f.maxOutputTokens
	case "parallel_tool_calls":
		return &f.parallelToolCalls
	case "user":
		return &f.user
	}
	return f.deliveryFields.field(key)
}

// ParseResponses validates a responses request body (SPEC 2.6 and 8) and
// returns what the gateway needs from it. The error is the first violation,
// checked in the order of the SPEC's field table; members the contract does
// not name (and the items of input, which it leaves arbitrary) pass through
// unvalidated.
func ParseResponses(body []byte) (Request, *ValidationError) {
	req := Request{Dialect: Responses}
	root, err := parseBody(body)
	if err != nil {
		return Request{Dialect: Responses}, err
	}
	var f responsesFields
	var dup *ValidationError
	root.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return Request{Dialect: Responses}, dup
	}
	if err := f.read(&req); err != nil {
		return Request{Dialect: Responses}, err
	}
	return req, nil
}

func (f *responsesFields) read(req *Request) *ValidationError {
	if err := readModel(f.model, req); err != nil {
		return err
	}
	switch {
	case absent(f.input):
		return missing("input")
	case f.input.Type != gjson.String && !f.input.IsArray():
		return invalid("input", "must be a string or an array of input items")
	case f.input.Type == gjson.String:
		req.Messages = 1
	default:
		f.input.ForEach(func(_, _ gjson.Result) bool { req.Messages++; return true })
	}
	if err := optString("instructions", f.instructions); err != nil {
		return err
	}
	var err *ValidationError
	if req.Tools, err = validateResponsesTools(f.tools); err != nil {
		return err
	}
	if err := optNumber("temperature", f.temperature, 0, 2); err != nil {
		return err
	}
	if err := optNumber("top_p", f.topP, 0, 1); err != nil {
		return err
	}
	if err := optInteger("max_output_tokens", f.maxOutputTokens, 1); err != nil {
		return err
	}
	if err := optBool("parallel_tool_calls", f.parallelToolCalls); err != nil {
		return err
	}
	if err := f.readStream(req); err != nil {
		return err
	}
	// The contract does not name user on this shape, so a value of another
	// type passes through; only a string identifies the end user.
	if f.user.Type == gjson.String {
		req.User = strings.Clone(f.user.Str)
	}
	return f.readRest(req)
}

// responsesToolFields are the members of a responses tool.
type responsesToolFields struct {
	typ, name, description, parameters, strict gjson.Result
}

func (f *responsesToolFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "name":
		return &f.name
	case "description":
		return &f.description
	case "parameters":
		return &f.parameters
	case "strict":
		return &f.strict
	}
	return nil
}

// validateResponsesTools checks the tools and returns how many there are.
func validateResponsesTools(v gjson.Result) (int, *ValidationError) {
	if absent(v) {
		return 0, nil
	}
	if !v.IsArray() {
		return 0, invalid("tools", "must be an array of tools")
	}
	n, err := eachItem(v, validateResponsesTool)
	return n, under("tools", err)
}

// validateResponsesTool checks one tool. Its type is open: besides function
// tools, upstreams offer built-in tools under their own type names.
func validateResponsesTool(tool gjson.Result) *ValidationError {
	if !tool.IsObject() {
		return invalid("", "must be a tool object")
	}
	var f responsesToolFields
	var dup *ValidationError
	tool.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if err := reqString("type", f.typ); err != nil {
		return err
	}
	if err := optString("name", f.name); err != nil {
		return err
	}
	if err := optString("description", f.description); err != nil {
		return err
	}
	if err := optObject("parameters", f.parameters); err != nil {
		return err
	}
	return optBool("strict", f.strict)
}
