package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Helpers for reading wire JSON with gjson.

// isNumber reports whether a value is a JSON number, the only form a sampling
// parameter is copied in.
func isNumber(v gjson.Result) bool { return v.Type == gjson.Number }

// textParts returns the text of a content value that is either a string or an
// array of parts carrying a "text" field, joined without a separator.
func textParts(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	if !v.IsArray() {
		return ""
	}
	var b strings.Builder
	eachElement(v, func(p gjson.Result) bool {
		if t := p.Get("text"); t.Type == gjson.String {
			b.WriteString(t.Str)
		}
		return true
	})
	return b.String()
}

// eachElement calls fn for each element of a JSON array until fn returns
// false, and does nothing for any other value: gjson's ForEach would call fn
// once with a scalar itself, which a client can send where an array belongs.
func eachElement(v gjson.Result, fn func(gjson.Result) bool) {
	if v.IsArray() {
		v.ForEach(func(_, e gjson.Result) bool { return fn(e) })
	}
}

// eachMember calls fn with each member of a JSON object, in order; one pass
// over an object is cheaper than a Get per field, each of which scans past
// the members before it.
func eachMember(obj gjson.Result, fn func(key string, v gjson.Result)) {
	if obj.IsObject() {
		obj.ForEach(func(k, v gjson.Result) bool {
			fn(k.Str, v)
			return true
		})
	}
}

// setOnce stores v unless an earlier member of the same name was stored, so
// that a duplicated member reads as gjson's Get would read it.
func setOnce(dst *gjson.Result, v gjson.Result) {
	if !dst.Exists() {
		*dst = v
	}
}
