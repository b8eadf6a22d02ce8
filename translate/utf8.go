package translate

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// CodeInvalidUTF8 is the error code of a request whose JSON text holds a
// string (a member name or a value) with bytes that are not UTF-8. Such
// bytes would be stored and later served as they came, and a client that
// reads them back could not parse the page that carries them.
//
// JSON escapes are not bytes of that kind: "\ud800", a lone surrogate, is
// valid JSON text made of ASCII, so it is accepted and kept as the escape;
// readers that decode it substitute U+FFFD. Only raw bytes are refused.
const CodeInvalidUTF8 = "invalid_utf8"

// InvalidUTF8Param reports whether the JSON text body holds a string, a
// member name or a value, with bytes that are not UTF-8, and names the
// first such string with a param path in the style of the validators:
// "messages[0].content", "input[2]", "items[0].expected_output". A member
// name at fault is named by its own path, its bad bytes shown as U+FFFD.
// The param is "" for a body that is itself one bad string.
//
// ok is false when body is valid UTF-8, and when its first bad byte lies
// outside every string (in a number, a literal or between tokens): such a
// body is not JSON, and the caller's JSON check reports it.
//
// Only the failing path does any work beyond one utf8.Valid pass: a single
// scan up to the first bad byte, tracking the member names and array indices
// it passes through, so the cost stays linear however deep the body nests.
func InvalidUTF8Param(body []byte) (param string, ok bool) {
	if utf8.Valid(body) {
		return "", false
	}
	s := bodyString(body)
	return utf8Param(s, firstInvalidUTF8(s))
}

// firstInvalidUTF8 returns the offset of the first byte of s that does not
// start a UTF-8 sequence, -1 when there is none.
func firstInvalidUTF8(s string) int {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// pathFrame is an array or object the scan is inside.
type pathFrame struct {
	array bool
	// index is the array item the scan is in.
	index int
	// inKey is set in an object between '{' or ',' and the next ':', where
	// a string is a member name.
	inKey bool
	// key is the raw text, quotes included, of the member the scan is in.
	key string
}

// utf8Param scans the JSON text s up to offset bad, the first byte that is
// not UTF-8, and names the string holding it. Frames deeper than maxDepth
// are counted rather than kept, so a string below them is named by the
// deepest container kept.
func utf8Param(s string, bad int) (string, bool) {
	if bad < 0 {
		return "", false
	}
	var frames []pathFrame
	skipped := 0
	for i := 0; i < bad; i++ {
		switch s[i] {
		case '"':
			end := stringEnd(s, i)
			top := len(frames) - 1
			isKey := skipped == 0 && top >= 0 && !frames[top].array && frames[top].inKey
			if bad < end {
				if isKey {
					frames[top].key = s[i:min(end+1, len(s))]
					return framePath(frames, true), true
				}
				return framePath(frames, false), true
			}
			if isKey {
				frames[top].key = s[i : end+1]
			}
			i = end
		case '{', '[':
			if skipped > 0 || len(frames) == maxDepth {
				skipped++
				continue
			}
			frames = append(frames, pathFrame{array: s[i] == '[', inKey: s[i] == '{'})
		case '}', ']':
			switch {
			case skipped > 0:
				skipped--
			case len(frames) > 0:
				frames = frames[:len(frames)-1]
			}
		case ',':
			if skipped == 0 && len(frames) > 0 {
				f := &frames[len(frames)-1]
				f.index++
				f.inKey = !f.array
			}
		case ':':
			if skipped == 0 && len(frames) > 0 {
				frames[len(frames)-1].inKey = false
			}
		}
	}
	return "", false
}

// stringEnd returns the offset of the quote that closes the JSON string
// opening at s[start], len(s) when it is not closed.
func stringEnd(s string, start int) int {
	for j := start + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(s)
}

// framePath builds the param of the place the scan stopped: every frame's
// member name or index, outermost first. With badKey the innermost member
// name is the string at fault and its bad bytes are shown as U+FFFD.
func framePath(frames []pathFrame, badKey bool) string {
	var b strings.Builder
	for n, f := range frames {
		if f.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
			continue
		}
		if f.key == "" {
			// An object the scan entered before reading a member name,
			// which only a text that is not JSON has.
			break
		}
		key := gjson.Parse(f.key).Str
		if badKey && n == len(frames)-1 {
			key = strings.ToValidUTF8(key, "\uFFFD")
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(key)
	}
	return b.String()
}
