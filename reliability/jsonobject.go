package reliability

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jsonObject is a JSON object whose fields are read one at a time, so that
// every violation names its field. Request bodies and evaluator configs
// are read with it; both refuse fields they do not know.
type jsonObject struct {
	fields map[string]json.RawMessage
}

// parseObject decodes raw, which must be a JSON object.
func parseObject(raw []byte) (jsonObject, *ValidationError) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) > 0 && !json.Valid(trimmed) {
			return jsonObject{}, invalid("", "must be valid JSON")
		}
		return jsonObject{}, invalid("", "must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return jsonObject{}, invalid("", "must be valid JSON")
	}
	return jsonObject{fields: fields}, nil
}

// allow refuses any field not in names, naming the first unknown one in
// alphabetical order and listing them all in the message.
func (o jsonObject) allow(names ...string) *ValidationError {
	var unknown []string
	for name := range o.fields {
		if !slices.Contains(names, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	quoted := make([]string, len(unknown))
	for i, u := range unknown {
		quoted[i] = strconv.Quote(u)
	}
	return &ValidationError{Param: unknown[0], Code: CodeUnknownParameter,
		Message: "unknown parameter " + strings.Join(quoted, ", ") + "; allowed: " + strings.Join(names, ", ")}
}

// has reports whether the field was sent, null included.
func (o jsonObject) has(name string) bool {
	_, ok := o.fields[name]
	return ok
}

// isNull reports whether the field was sent as null.
func (o jsonObject) isNull(name string) bool {
	raw, ok := o.fields[name]
	return ok && string(raw) == "null"
}

// present reports whether the field was sent with a value other than null.
func (o jsonObject) present(name string) bool {
	return o.has(name) && !o.isNull(name)
}

// raw returns the field's JSON text; nil when absent.
func (o jsonObject) raw(name string) json.RawMessage {
	return o.fields[name]
}

// required reports a field that was not sent, or sent as null.
func (o jsonObject) required(name string) *ValidationError {
	if o.present(name) {
		return nil
	}
	return &ValidationError{Param: name, Code: CodeMissingParameter, Message: "is required"}
}

// str reads a string field. ok is false when the field is absent; null is
// not a string, so fields that may be null are checked with isNull first.
func (o jsonObject) str(name string) (v string, ok bool, verr *ValidationError) {
	raw, ok := o.fields[name]
	if !ok {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil || string(raw) == "null" {
		return "", false, invalid(name, "must be a string")
	}
	return v, true, nil
}

// text reads a string field of minLen to maxLen characters.
func (o jsonObject) text(name string, minLen, maxLen int) (string, bool, *ValidationError) {
	v, ok, verr := o.str(name)
	if verr != nil || !ok {
		return v, ok, verr
	}
	if n := textLen(v); n < minLen || n > maxLen {
		if minLen == 0 {
			return "", false, invalid(name, "must be at most %d characters, not %d", maxLen, n)
		}
		return "", false, invalid(name, "must be %d to %d characters, not %d", minLen, maxLen, n)
	}
	return v, true, nil
}

// num reads a number field within lo..hi.
func (o jsonObject) num(name string, lo, hi float64) (float64, bool, *ValidationError) {
	raw, ok := o.fields[name]
	if !ok {
		return 0, false, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || string(raw) == "null" {
		return 0, false, invalid(name, "must be a number")
	}
	if v < lo || v > hi {
		return 0, false, invalid(name, "must be a number from %g to %g", lo, hi)
	}
	return v, true, nil
}

// integer reads an integer field within lo..hi.
func (o jsonObject) integer(name string, lo, hi int) (int, bool, *ValidationError) {
	v, ok, verr := o.num(name, math.Inf(-1), math.Inf(1))
	if verr != nil || !ok {
		return 0, ok, verr
	}
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, false, invalid(name, "must be an integer from %d to %d", lo, hi)
	}
	return int(v), true, nil
}

// boolean reads a boolean field.
func (o jsonObject) boolean(name string) (bool, bool, *ValidationError) {
	raw, ok := o.fields[name]
	if !ok {
		return false, false, nil
	}
	switch string(raw) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, invalid(name, "must be a boolean")
}

// array reads a field that must be a JSON array, returning its elements.
func (o jsonObject) array(name string) ([]json.RawMessage, bool, *ValidationError) {
	raw, ok := o.fields[name]
	if !ok {
		return nil, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || string(raw) == "null" {
		return nil, false, invalid(name, "must be an array")
	}
	return items, true, nil
}

// object reads a field that must be a JSON object.
func (o jsonObject) object(name string) (jsonObject, bool, *ValidationError) {
	raw, ok := o.fields[name]
	if !ok {
		return jsonObject{}, false, nil
	}
	obj, verr := parseObject(raw)
	if verr != nil {
		return jsonObject{}, false, invalid(name, "must be an object")
	}
	return obj, true, nil
}

// stringItem decodes one element of an array that must be a string.
func stringItem(param string, raw json.RawMessage) (string, *ValidationError) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || string(raw) == "null" {
		return "", invalid(param, "must be a string")
	}
	return v, nil
}
