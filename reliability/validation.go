package reliability

import (
	"fmt"
	"unicode/utf8"

	"github.com/modelgate/gateway/translate"
)

// Codes of the validation errors the reliability API answers with, in
// error.code. Each names the rule, so a client can react without parsing
// the message.
const (
	// CodeInvalidValue is a field with a value the contract does not allow.
	CodeInvalidValue = "invalid_value"
	// CodeMissingParameter is a required field that was not sent.
	CodeMissingParameter = "missing_parameter"
	// CodeUnknownParameter is a field the request shape does not have.
	CodeUnknownParameter = "unknown_parameter"
	// CodeInvalidBody is a body that is not a JSON object.
	CodeInvalidBody = "invalid_body"
	// CodeInvalidUTF8 is a string in the body, named by the param, with
	// bytes that are not UTF-8; the model endpoints answer with the same code.
	CodeInvalidUTF8 = translate.CodeInvalidUTF8
	// CodeDatasetFrozen is a change to a golden dataset.
	CodeDatasetFrozen = "dataset_frozen"
	// CodeDatasetNotGolden is a training request for a draft dataset.
	CodeDatasetNotGolden = "dataset_not_golden"
	// CodeDatasetEmpty is an evaluation of a dataset without items.
	CodeDatasetEmpty = "dataset_empty"
	// CodeAlreadyExists is a create that would reuse a unique name.
	CodeAlreadyExists = "already_exists"
	// CodeShipGatesUnmet is a promotion refused by its ship gates; it is
	// also the error's type (SPEC section 7).
	CodeShipGatesUnmet = "ship_gates_unmet"
)

// ValidationError is a request that breaks a rule of the API contract. The
// HTTP layer answers it with 400, type invalid_request_error, naming Param.
// Store methods return it too, wrapped, for the rules only a transaction can
// check (a referenced evaluator of the org, a dataset still draft).
type ValidationError struct {
	// Param is the path of the offending field, e.g. "items[3].weight" or
	// "config.pattern"; empty when no single field is at fault.
	Param string
	// Code is one of the Code constants.
	Code string
	// Message says what is wrong, for a person.
	Message string
}

// Error returns the message, prefixed by the field it is about.
func (e *ValidationError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Param + ": " + e.Message
}

// invalid builds a ValidationError with CodeInvalidValue.
func invalid(param, format string, args ...any) *ValidationError {
	return &ValidationError{Param: param, Code: CodeInvalidValue, Message: fmt.Sprintf(format, args...)}
}

// under prefixes the param of err with the path of the value it was found
// in, so nested params read like "config.schema" or "ship_gates[1].min_score".
func under(prefix string, err *ValidationError) *ValidationError {
	if err == nil {
		return nil
	}
	e := *err
	switch {
	case e.Param == "":
		e.Param = prefix
	case e.Param[0] == '[':
		e.Param = prefix + e.Param
	default:
		e.Param = prefix + "." + e.Param
	}
	return &e
}

// textLen is the length of s in characters, the unit of the SPEC's limits.
func textLen(s string) int {
	return utf8.RuneCountInString(s)
}

// Limits of SPEC section 8 on the reliability resources.
const (
	// maxNameLen bounds operation, dataset and evaluator names.
	maxNameLen = 256
	// maxDescriptionLen bounds an operation's description.
	maxDescriptionLen = 2000
	// maxItemsPerAdd bounds the items of one add.
	maxItemsPerAdd = 1000
	// maxItemWeight bounds an item's weight.
	maxItemWeight = 100
	// maxCorrectionLen bounds a feedback correction.
	maxCorrectionLen = 64000
	// maxTags bounds the tags of one feedback.
	maxTags = 64
	// maxTagLen bounds one tag.
	maxTagLen = 64
	// maxTrainingNotesLen bounds training request notes.
	maxTrainingNotesLen = 8000
)
