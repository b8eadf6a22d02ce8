package demoupstream

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Request readers use gjson on the raw body: they look at a handful of
// fields and never build a generic map of the request.

// parseBody checks that body is one JSON object and returns it parsed.
func parseBody(body string, d dialect) (gjson.Result, *apiError) {
	if !gjson.Valid(body) {
		if d == dialectAnthropic {
			return gjson.Result{}, invalid("", "", "There was an error parsing the body of your request: the body is not valid JSON")
		}
		return gjson.Result{}, invalid("", "", "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.")
	}
	root := gjson.Parse(body)
	if !root.IsObject() {
		if d == dialectAnthropic {
			return gjson.Result{}, invalid("", "", "Input should be a valid dictionary or object to extract fields from")
		}
		return gjson.Result{}, invalid("", "invalid_type", "Invalid type for the request body: expected an object, but got %s instead.", typeName(root))
	}
	return root, nil
}

// fieldSet returns a set of top-level field names for the strict check.
func fieldSet(names ...string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// absent reports whether an optional field is missing or null, which the
// real APIs treat alike.
func absent(v gjson.Result) bool {
	return !v.Exists() || v.Type == gjson.Null
}

// typeName names a JSON value's type the way OpenAI's error messages do.
func typeName(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		if strings.ContainsAny(v.Raw, ".eE") {
			return "a decimal"
		}
		return "an integer"
	case gjson.True, gjson.False:
		return "a boolean"
	case gjson.Null:
		return "null"
	}
	if v.IsArray() {
		return "an array"
	}
	return "an object"
}

// isInteger reports whether v is a JSON number without a fraction.
func isInteger(v gjson.Result) bool {
	return v.Type == gjson.Number && v.Num == float64(int64(v.Num))
}

// textPart reports whether a content part of the given type carries text
// that counts as the message's text.
type textPart func(partType string) bool

// contentText returns the text of message content: the string itself, or
// the text of its text parts joined by one space.
func contentText(content gjson.Result, isText textPart) string {
	if content.Type == gjson.String {
		return content.Str
	}
	var b strings.Builder
	content.ForEach(func(_, part gjson.Result) bool {
		if isText(part.Get("type").String()) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(part.Get("text").String())
		}
		return true
	})
	return b.String()
}

// contentWords counts the words of contentText(content, isText) without building it.
func contentWords(content gjson.Result, isText textPart) int {
	if content.Type == gjson.String {
		return countWords(content.Str)
	}
	n := 0
	content.ForEach(func(_, part gjson.Result) bool {
		if isText(part.Get("type").String()) {
			n += countWords(part.Get("text").String())
		}
		return true
	})
	return n
}

// toolIDs tracks the ids of the tool calls one message made, in order, and
// which of them have been answered. Lookups go through a map so that a
// message with very many calls stays linear to check.
type toolIDs struct {
	order    []string
	answered map[string]bool
}

// reset forgets all ids, keeping the storage.
func (c *toolIDs) reset() {
	c.order = c.order[:0]
	clear(c.answered)
}

// add records a call id.
func (c *toolIDs) add(id string) {
	if c.answered == nil {
		c.answered = make(map[string]bool)
	}
	if _, seen := c.answered[id]; !seen {
		c.order = append(c.order, id)
		c.answered[id] = false
	}
}

// answer marks id answered and reports whether it was a recorded call.
func (c *toolIDs) answer(id string) bool {
	if _, ok := c.answered[id]; !ok {
		return false
	}
	c.answered[id] = true
	return true
}

// unanswered lists, comma-separated and in call order, the calls without an answer.
func (c *toolIDs) unanswered() string {
	var missing []string
	for _, id := range c.order {
		if !c.answered[id] {
			missing = append(missing, id)
		}
	}
	return strings.Join(missing, ", ")
}
