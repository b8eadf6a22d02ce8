package translate

import "github.com/tidwall/gjson"

// objectFrame checks the framing of a JSON object from the members gjson's
// ForEach hands over, without a second pass over the object: that it opens
// with a brace, that its members are separated by commas and their keys
// from their values by colons with only white space around them, that its
// literal and number members are spelled as JSON spells them, and that it
// closes after its last member with nothing but white space after it.
//
// ForEach alone is lenient: it finds members past a missing comma, reads
// "tru" as true and keeps going past an object's closing brace into
// whatever follows, so a chunk cut short, run together with another or
// garbled between members would pass. Nested objects and arrays are taken
// as ForEach delimits them (brackets balanced, strings closed); their
// insides are not checked here.
type objectFrame struct {
	data []byte
	// next is where the bytes between the last member and the next one
	// (or the closing brace) start.
	next    int
	members int
	ok      bool
}

func newObjectFrame(data []byte) objectFrame {
	i := skipSpace(data, 0)
	return objectFrame{data: data, next: i + 1, ok: i < len(data) && data[i] == '{'}
}

// member checks one member; false ends the ForEach, the object being
// malformed. Compact JSON, with no white space between members, takes the
// short way.
func (f *objectFrame) member(k, v *gjson.Result) bool {
	sep := f.next
	if f.members > 0 {
		sep++
	}
	colon := k.Index + len(k.Raw)
	if f.ok && sep == k.Index && colon+1 == v.Index && (f.members == 0 || f.data[f.next] == ',') &&
		f.data[colon] == ':' && validScalar(v) {
		f.next = v.Index + len(v.Raw)
		f.members++
		return true
	}
	return f.spacedMember(k, v)
}

// spacedMember is member for members with white space around their
// separators.
func (f *objectFrame) spacedMember(k, v *gjson.Result) bool {
	if !f.ok {
		return false
	}
	d := f.data
	i := skipSpace(d, f.next)
	if f.members > 0 {
		if i >= len(d) || d[i] != ',' {
			f.ok = false
			return false
		}
		i = skipSpace(d, i+1)
	}
	f.ok = i == k.Index && k.Index+len(k.Raw) <= len(d)
	if f.ok {
		i = skipSpace(d, k.Index+len(k.Raw))
		f.ok = i < len(d) && d[i] == ':' && skipSpace(d, i+1) == v.Index && validScalar(v)
	}
	f.next = v.Index + len(v.Raw)
	f.members++
	return f.ok
}

// closed reports whether the object was well framed to its end.
func (f *objectFrame) closed() bool {
	if !f.ok {
		return false
	}
	i := skipSpace(f.data, f.next)
	return i < len(f.data) && f.data[i] == '}' && skipSpace(f.data, i+1) == len(f.data)
}

// validScalar reports whether a value gjson read is spelled as JSON spells
// it: gjson reads any word starting with t, f or n as a literal, and
// anything up to a delimiter as a number (NaN, Infinity and 1.2.3 too).
// Strings, objects and arrays are taken as gjson delimited them.
func validScalar(v *gjson.Result) bool {
	switch v.Type {
	case gjson.True:
		return v.Raw == "true"
	case gjson.False:
		return v.Raw == "false"
	case gjson.Null:
		return v.Raw == "null"
	case gjson.Number:
		return validNumber(v.Raw)
	}
	return true
}

// validNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// skipSpace returns the index of the first byte from i on that is not JSON
// white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}
