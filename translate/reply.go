package translate

import (
	"strings"
	"time"
)

// A reply is a non-stream completion response in no particular dialect: the
// reader of each upstream shape produces one and the writer of each client
// shape consumes it, as conversation does for requests.
type reply struct {
	// id is the upstream's response id; writers keep its unique part under
	// their own prefix (the gateway sets its final id afterwards anyway).
	id      string
	model   string
	created int64
	// items are the assistant's output in order: runs of text and tool calls.
	items []replyItem
	// finish is in the chat-completions vocabulary; empty when unknown.
	finish string
	usage  tokenUsage
}

// replyItem is text, or a tool call when call is set.
type replyItem struct {
	call bool
	text string
	id   string
	name string
	// args is the JSON text of the arguments object.
	args string
}

// tokenUsage is token accounting as the OpenAI shapes count it: input
// includes the tokens served from a prompt cache (cached says how many
// were) and those written to it (cacheWrite for the cache's default
// duration, cacheWrite1h for one hour).
type tokenUsage struct {
	input        int64
	output       int64
	cached       int64
	cacheWrite   int64
	cacheWrite1h int64
	known        bool
}

// usage returns the gateway's view of the token counts.
func (u tokenUsage) usage() Usage {
	return Usage{InputTokens: int(u.input), OutputTokens: int(u.output), CacheReadTokens: int(u.cached),
		CacheWriteTokens: int(u.cacheWrite), CacheWrite1hTokens: int(u.cacheWrite1h), Known: u.known}
}

// uncached is the input that is neither read from nor written to a prompt
// cache: what the messages shape calls input_tokens.
func (u tokenUsage) uncached() int64 {
	return max(u.input-u.cached-u.cacheWrite-u.cacheWrite1h, 0)
}

// tokenUsageOf is the neutral form of a Usage.
func tokenUsageOf(u Usage) tokenUsage {
	return tokenUsage{input: int64(u.InputTokens), output: int64(u.OutputTokens), cached: int64(u.CacheReadTokens),
		cacheWrite: int64(u.CacheWriteTokens), cacheWrite1h: int64(u.CacheWrite1hTokens), known: u.Known}
}

// result returns what the assistant produced.
func (r *reply) result() Result {
	res := Result{FinishReason: r.finish}
	var text strings.Builder
	for i := range r.items {
		it := &r.items[i]
		if it.call {
			res.ToolCalls = append(res.ToolCalls, ToolCall{ID: it.id, Name: it.name, Arguments: it.args})
		} else {
			text.WriteString(it.text)
		}
	}
	res.Text = text.String()
	return res
}

// calledTools reports whether the reply holds a tool call.
func (r *reply) calledTools() bool {
	for i := range r.items {
		if r.items[i].call {
			return true
		}
	}
	return false
}

// addText appends assistant text, joining it to a text run in progress.
func (r *reply) addText(s string) {
	if s == "" {
		return
	}
	if n := len(r.items); n > 0 && !r.items[n-1].call {
		r.items[n-1].text += s
		return
	}
	r.items = append(r.items, replyItem{text: s})
}

// idPrefixes are the prefixes the dialects put on response ids.
var idPrefixes = [...]string{"chatcmpl-", "msg_", "resp_"}

// idSuffix returns the unique part of a response id, without its dialect's
// prefix, so that it can be carried under another dialect's prefix.
func idSuffix(id string) string {
	for _, p := range idPrefixes {
		if s, ok := strings.CutPrefix(id, p); ok {
			return s
		}
	}
	return id
}

// createdOr returns a creation time, or now when the upstream gave none (the
// messages shape has no timestamp; the OpenAI shapes require one).
func createdOr(t int64) int64 {
	if t > 0 {
		return t
	}
	return time.Now().Unix()
}

// size is about how many bytes the reply's text and tool calls take, to
// size a buffer for writing it.
func (r *reply) size() int {
	n := 0
	for i := range r.items {
		n += len(r.items[i].text) + len(r.items[i].args) + len(r.items[i].name) + len(r.items[i].id) + 64
	}
	return n
}
