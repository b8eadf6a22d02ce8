package translate

import (
	"github.com/tidwall/gjson"
)

var (
	encodingFormats = []string{"float", "base64"}
	quantizations   = []string{"full", "q8", "q4"}
)

// embeddingsFields are the members of an embeddings request that the
// gateway reads or validates.
type embeddingsFields struct {
	model, input, encodingFormat, dimensions, quantization gjson.Result
	forbidAtlas, user, metadata                            gjson.Result
}

func (f *embeddingsFields) field(key string) *gjson.Result {
	switch key {
	case "model":
		return &f.model
	case "input":
		return &f.input
	case "encoding_format":
		return &f.encodingFormat
	case "dimensions":
		return &f.dimensions
	case "quantization":
		return &f.quantization
	case "forbid_atlas_network":
		return &f.forbidAtlas
	case "user":
		return &f.user
	case "metadata":
		return &f.metadata
	}
	return nil
}

// ParseEmbeddings validates an embeddings request body (SPEC 2.7 and 8) and
// returns what the gateway needs from it. The error is the first violation,
// checked in the order of the SPEC's field table; members the contract does
// not name pass through unvalidated.
func ParseEmbeddings(body []byte) (Request, *ValidationError) {
	req := Request{Dialect: Embeddings}
	root, err := parseBody(body)
	if err != nil {
		return Request{Dialect: Embeddings}, err
	}
	var f embeddingsFields
	var dup *ValidationError
	root.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return Request{Dialect: Embeddings}, dup
	}
	if err := f.read(&req); err != nil {
		return Request{Dialect: Embeddings}, err
	}
	return req, nil
}

func (f *embeddingsFields) read(req *Request) *ValidationError {
	if err := readModel(f.model, req); err != nil {
		return err
	}
	if err := validateEmbeddingsInput(f.input); err != nil {
		return err
	}
	if _, err := optEnum("encoding_format", f.encodingFormat, encodingFormats); err != nil {
		return err
	}
	if err := optInteger("dimensions", f.dimensions, 1); err != nil {
		return err
	}
	q, err := optEnum("quantization", f.quantization, quantizations)
	if err != nil {
		return err
	}
	req.Quantization = q
	if err := readForbidAtlas(f.forbidAtlas, req); err != nil {
		return err
	}
	if err := readUser(f.user, req); err != nil {
		return err
	}
	return readMetadata(f.metadata, req)
}

// validateEmbeddingsInput checks input: a non-empty string, or a non-empty
// array whose items are all non-empty strings or all content objects. The
// first item decides which array form the client meant, so a stray item of
// the other form is reported where it is.
func validateEmbeddingsInput(v gjson.Result) *ValidationError {
	switch {
	case absent(v):
		return missing("input")
	case v.Type == gjson.String:
		if v.Str == "" {
			return invalid("input", "must not be empty")
		}
		return nil
	case !v.IsArray():
		return invalid("input", "must be a string, an array of strings or an array of content objects")
	}
	check := validateEmbeddingsText
	if v.Get("0").IsObject() {
		check = validateEmbeddingsObject
	}
	n, err := eachItem(v, check)
	if err != nil {
		return under("input", err)
	}
	if n == 0 {
		return invalid("input", "must not be empty")
	}
	return nil
}

func validateEmbeddingsText(item gjson.Result) *ValidationError {
	if item.Type != gjson.String || item.Str == "" {
		return invalid("", "must be a non-empty string")
	}
	return nil
}

// embeddingsObjectFields are the members of a content object input.
type embeddingsObjectFields struct {
	content gjson.Result
}

func (f *embeddingsObjectFields) field(key string) *gjson.Result {
	if key == "content" {
		return &f.content
	}
	return nil
}

func validateEmbeddingsObject(item gjson.Result) *ValidationError {
	if !item.IsObject() {
		return invalid("", "must be an object with content, like the other items")
	}
	var f embeddingsObjectFields
	var dup *ValidationError
	item.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	if absent(f.content) {
		return missing("content")
	}
	if !f.content.IsArray() {
		return invalid("content", "must be an array of content parts")
	}
	n, err := eachItem(f.content, validateChatPart)
	if err != nil {
		return under("content", err)
	}
	if n == 0 {
		return invalid("content", "must not be empty")
	}
	return nil
}
