package demoupstream

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// turn is what a dialect reader extracts from a request: the few facts the
// deterministic behaviour depends on. The behaviour is then written once
// for all three chat dialects.
type turn struct {
	model string
	// userText is the text of the last user message, directives still in it.
	userText string
	// endsWithToolResult reports whether the last message is a tool result;
	// toolResult is then that result's text.
	endsWithToolResult bool
	toolResult         string
	// tools are the request's function tools, in request order.
	tools []tool
	// toolsOff is set by tool_choice "none".
	toolsOff bool
	// forced is the tool named by tool_choice, if it names one.
	forced string
	// inputWords counts the words of all text in the request.
	inputWords int
	stream     bool
}

// tool is a function tool the client offers.
type tool struct {
	name   string
	schema gjson.Result
}

// reply is the deterministic answer to a turn.
type reply struct {
	// text is the reply text when no tool is called.
	text string
	// call is the tool call the model makes instead of answering, if any.
	call *toolCall
	// inputTokens and outputTokens are the usage the response reports;
	// inputTokens leaves out the cache_read and cache_write directives'
	// tokens, which each dialect reports in its own way.
	inputTokens  int
	outputTokens int
	directives
}

// toolCall is a call of one of the request's tools.
type toolCall struct {
	name      string
	arguments string
	// digest is the deterministic suffix of the call id in every dialect.
	digest string
}

// directives are the test controls a request carries in its last user text.
type directives struct {
	// status, when 400 or more, answers with that status and error body.
	status int
	// cut, when 0 or more, aborts a stream after that many content pieces.
	cut int
	// sleep delays the response headers.
	sleep time.Duration
	// words, when 0 or more, replaces the reply with that many words.
	words int
	// cacheRead and cacheWrite are prompt tokens the usage reports as read
	// from and written to a prompt cache, on top of the counted input, as
	// a provider with prompt caching reports an agent's repeated prefix.
	cacheRead, cacheWrite int
}

// maxDirectiveLen is the length of the longest directive between its
// brackets: the longest name, the colon and nine digits.
const maxDirectiveLen = len("cache_write:") + 9

// maxWords bounds [[words:N]] so that one request cannot ask for an
// unbounded amount of memory.
const maxWords = 100000

// answer decides the reply to t.
func answer(t *turn) reply {
	clean, d := parseDirectives(t.userText)
	r := reply{inputTokens: t.inputWords, directives: d}
	if len(t.tools) > 0 && !t.toolsOff && !t.endsWithToolResult {
		picked := t.tools[0]
		for _, tl := range t.tools {
			if tl.name == t.forced {
				picked = tl
				break
			}
		}
		args := buildArguments(picked.schema, clean)
		r.call = &toolCall{name: picked.name, arguments: args, digest: callDigest(picked.name, args)}
		r.outputTokens = (len(args) + 3) / 4
		return r
	}
	switch {
	case t.endsWithToolResult:
		r.text = normalizeSpace("Tool result: " + t.toolResult)
	case d.words >= 0:
		r.text = numberedWords(d.words)
	default:
		r.text = echoReply(t.model, clean)
	}
	r.outputTokens = countWords(r.text)
	return r
}

// parseDirectives removes the directives from s and returns the rest with
// its words joined by single spaces. A directive is "[[name:digits]]" with a
// known name; anything else in double brackets is ordinary text. When a
// directive appears twice, the last one counts.
func parseDirectives(s string) (string, directives) {
	d := directives{cut: -1, words: -1}
	if !strings.Contains(s, "[[") {
		return normalizeSpace(s), d
	}
	var kept strings.Builder
	rest := s
	for {
		open := strings.Index(rest, "[[")
		if open < 0 {
			kept.WriteString(rest)
			break
		}
		kept.WriteString(rest[:open])
		body := rest[open+2:]
		// Only a short window can hold a directive; searching further would
		// make a text full of "[[" quadratic.
		end := strings.Index(body[:min(len(body), maxDirectiveLen+2)], "]]")
		name, digits, ok := strings.Cut(body[:max(end, 0)], ":")
		n, valid := parseCount(digits)
		if end < 0 || !ok || !valid || !d.set(name, n) {
			// Step over one bracket only, so that "[[[cut:1]]" still holds a directive.
			kept.WriteByte('[')
			rest = rest[open+1:]
			continue
		}
		kept.WriteByte(' ')
		rest = body[end+2:]
	}
	return normalizeSpace(kept.String()), d
}

// set records directive name with value n and reports whether name is a directive.
func (d *directives) set(name string, n int) bool {
	switch name {
	case "status":
		d.status = n
	case "cut":
		d.cut = n
	case "sleep":
		d.sleep = time.Duration(n) * time.Millisecond
	case "words":
		d.words = min(n, maxWords)
	case "cache_read":
		d.cacheRead = n
	case "cache_write":
		d.cacheWrite = n
	default:
		return false
	}
	return true
}

// parseCount parses a directive value: 1 to 9 decimal digits, so that it
// cannot overflow.
func parseCount(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// normalizeSpace joins the words of s with single spaces. Reply texts are
// normalized so that the streamed pieces (the first word, then " "+word)
// concatenate to exactly the non-streamed text.
func normalizeSpace(s string) string {
	if isNormalized(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isNormalized reports whether s is already words joined by single ASCII spaces.
func isNormalized(s string) bool {
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false
		}
		space := asciiSpace[c]
		if space && (c != ' ' || prevSpace) {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || s == ""
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// countWords counts whitespace-separated words as strings.Fields splits them.
func countWords(s string) int {
	n := 0
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

// numberedWords returns "w1 w2 ... wN".
func numberedWords(n int) string {
	b := make([]byte, 0, n*7)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b = append(b, ' ')
		}
		b = append(b, 'w')
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// pieces splits a normalized reply text into its streamed pieces: the first
// word, then " "+word for each next word.
func pieces(text string) []string {
	if text == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(text, " ")+1)
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	return append(out, text[start:])
}

// fragmentSize is the largest streamed arguments fragment, in bytes.
const fragmentSize = 8

// fragments splits tool-call arguments into the pieces a stream sends: at
// most fragmentSize bytes each and never fewer than two, so that clients
// must really concatenate. Cuts fall on rune boundaries because each
// fragment travels as a JSON string of its own.
func fragments(args string) []string {
	size := fragmentSize
	if len(args) <= fragmentSize {
		size = max((len(args)+1)/2, 1)
	}
	var out []string
	for len(args) > 0 {
		n := min(size, len(args))
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		out = append(out, args[:n])
		args = args[n:]
	}
	return out
}

// buildArguments returns the arguments of a call of a tool with the given
// JSON schema: one value per property (only the required ones when the
// schema lists them), in the schema's property order, serialized as compact
// JSON. Each value depends on the property's type only: string -> text,
// integer and number -> 42, boolean -> true, array -> [], object -> {},
// anything else -> null.
func buildArguments(schema gjson.Result, text string) string {
	required := schema.Get("required")
	b := []byte{'{'}
	schema.Get("properties").ForEach(func(name, prop gjson.Result) bool {
		if required.IsArray() && !listsString(required, name.String()) {
			return true
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, name.String())
		b = append(b, ':')
		switch schemaType(prop) {
		case "string":
			b = appendString(b, text)
		case "integer", "number":
			b = append(b, "42"...)
		case "boolean":
			b = append(b, "true"...)
		case "array":
			b = append(b, "[]"...)
		case "object":
			b = append(b, "{}"...)
		default:
			b = append(b, "null"...)
		}
		return true
	})
	return string(append(b, '}'))
}

// schemaType returns a property's type: its "type" string, or the first
// non-null entry of a type list such as ["string","null"].
func schemaType(prop gjson.Result) string {
	t := prop.Get("type")
	if t.Type == gjson.String {
		return t.Str
	}
	found := ""
	t.ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String && v.Str != "null" {
			found = v.Str
			return false
		}
		return true
	})
	return found
}

// listsString reports whether the JSON array list contains the string s.
func listsString(list gjson.Result, s string) bool {
	found := false
	list.ForEach(func(_, v gjson.Result) bool {
		found = v.Type == gjson.String && v.Str == s
		return !found
	})
	return found
}
