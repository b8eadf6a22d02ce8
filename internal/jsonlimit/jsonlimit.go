// Package jsonlimit bounds the shape of a JSON text before it is parsed:
// how deeply it nests and how many values its objects and arrays hold. A
// parser's cost (and a hostile body's) grows with both, so the gateway
// checks them in one cheap pass and refuses a body over either bound
// before any parser sees it.
package jsonlimit

import "bytes"

// Limits bounds a JSON text. A zero field is no bound.
type Limits struct {
	// MaxDepth is the deepest nesting of objects and arrays.
	MaxDepth int
	// MaxMembers is the most values held by objects and arrays, counted
	// over the whole text: the members of every object plus the elements
	// of every array.
	MaxMembers int
}

// Violation names the bound a text exceeds.
type Violation uint8

const (
	// OK is a text within its limits (or one that is not JSON: the
	// parser that runs next reports that).
	OK Violation = iota
	// TooDeep is a text nested deeper than MaxDepth.
	TooDeep
	// TooManyMembers is a text holding more than MaxMembers values.
	TooManyMembers
)

// Check scans b, stopping at the first bound it exceeds. It skips the
// contents of strings, so it costs about one pass of a byte search over
// the text.
func Check(b []byte, l Limits) Violation {
	depth, members := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Jump to the closing quote: the next quote not escaped.
			for {
				j := bytes.IndexAny(b[i+1:], "\"\\")
				if j < 0 {
					return OK // unterminated: not JSON
				}
				i += 1 + j
				if b[i] == '"' {
					break
				}
				i++ // the escaped byte
			}
		case '{', '[':
			depth++
			if l.MaxDepth > 0 && depth > l.MaxDepth {
				return TooDeep
			}
			// A container that is not empty holds one value more than
			// the commas at its level.
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && b[j] != '}' && b[j] != ']' {
				members++
			}
		case '}', ']':
			depth--
		case ',':
			if depth > 0 {
				members++
			}
		default:
			continue
		}
		if l.MaxMembers > 0 && members > l.MaxMembers {
			return TooManyMembers
		}
	}
	return OK
}
