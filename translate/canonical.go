package translate

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// AppendCanonical appends v re-encoded as canonical JSON: no insignificant
// whitespace, object keys sorted (recursively), strings re-escaped
// uniformly, numbers as written. Two encodings of the same document (key
// order, spacing, "\u00e9" or "é") give the same bytes, which is what
// fingerprints and cache keys hash.
//
// Keys sort by the bytes of their UTF-8 encoding; members that repeat a key
// keep their order. Strings (keys included) are written by AppendJSONString,
// the gateway's one string encoder, after invalid UTF-8 is replaced by
// U+FFFD. A missing value is written as null.
func AppendCanonical(dst []byte, v gjson.Result) []byte {
	return appendCanonical(dst, v, false)
}

// CacheHintMember is the member by which a request marks a prompt prefix
// for the provider's prompt cache (Anthropic cache_control). It changes
// what the call costs, not what it answers.
const CacheHintMember = "cache_control"

// AppendCanonicalWithoutHints is AppendCanonical leaving out every
// CacheHintMember, at any depth: two requests that differ only in their
// prompt-cache hints are equivalent, and share cache keys.
func AppendCanonicalWithoutHints(dst []byte, v gjson.Result) []byte {
	return appendCanonical(dst, v, true)
}

func appendCanonical(dst []byte, v gjson.Result, noHints bool) []byte {
	switch v.Type {
	case gjson.String:
		return appendCanonicalString(dst, v.Str)
	case gjson.Number:
		return append(dst, v.Raw...)
	case gjson.True:
		return append(dst, "true"...)
	case gjson.False:
		return append(dst, "false"...)
	case gjson.JSON:
		if v.IsArray() {
			return appendArray(dst, v, noHints)
		}
		return appendObject(dst, v, noHints)
	}
	return append(dst, "null"...)
}

func appendArray(dst []byte, v gjson.Result, noHints bool) []byte {
	dst = append(dst, '[')
	first := true
	v.ForEach(func(_, item gjson.Result) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendCanonical(dst, item, noHints)
		return true
	})
	return append(dst, ']')
}

// appendCanonicalString appends s as a JSON string, with invalid UTF-8
// replaced as validUTF8 does.
func appendCanonicalString(dst []byte, s string) []byte {
	return AppendJSONString(dst, validUTF8(s))
}

// validUTF8 replaces each byte of invalid UTF-8 in s by U+FFFD, which is what
// a JSON decoder reads it as, so that it encodes and sorts exactly like that
// character does when a client sends it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	// strings.Map writes U+FFFD for every byte that does not decode.
	return strings.Map(func(r rune) rune { return r }, s)
}

// sortMember is one key and value of an object being sorted.
type sortMember struct {
	key   string
	value gjson.Result
}

func appendObject(dst []byte, v gjson.Result, noHints bool) []byte {
	// Most objects have few members: sort them in place on the stack.
	var buf [16]sortMember
	ms := buf[:0]
	v.ForEach(func(k, item gjson.Result) bool {
		if !noHints || k.Str != CacheHintMember {
			ms = append(ms, sortMember{validUTF8(k.Str), item})
		}
		return true
	})
	slices.SortStableFunc(ms, func(a, b sortMember) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, m.key)
		dst = append(dst, ':')
		dst = appendCanonical(dst, m.value, noHints)
	}
	return append(dst, '}')
}
