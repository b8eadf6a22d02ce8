package reliability

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// textOf renders a JSON value as the text a model, a pattern or a judge
// sees: a string as it is; a chat-style messages array, or a request
// body holding one, as the text of its messages; anything else as its
// compact JSON.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	r := gjson.ParseBytes(raw)
	switch {
	case r.Type == gjson.Null:
		return ""
	case r.Type == gjson.String:
		return r.Str
	case r.IsArray() && isMessages(r):
		return messagesText("", r)
	case r.IsObject():
		if msgs := r.Get("messages"); msgs.IsArray() {
			return messagesText(contentText(r.Get("system")), msgs)
		}
		if in := r.Get("input"); in.Exists() {
			system := r.Get("instructions").String()
			if in.Type == gjson.String {
				return joinTurns(system, []turn{{text: in.Str}})
			}
			return messagesText(system, in)
		}
		if c := r.Get("content"); c.Exists() && r.Get("role").Exists() {
			return contentText(c)
		}
	}
	return compactJSON(r.Raw)
}

// isMessages reports whether an array holds chat-style messages: objects
// with a role.
func isMessages(arr gjson.Result) bool {
	items := arr.Array()
	if len(items) == 0 {
		return false
	}
	for _, m := range items {
		if !m.IsObject() || m.Get("role").Type != gjson.String {
			return false
		}
	}
	return true
}

// turn is one message reduced to its role and text.
type turn struct {
	role, text string
}

// messagesText is the text of a messages array after an optional system
// text. A single message is its text alone, which is what a one-question
// prompt should read as; a conversation keeps each turn's role.
func messagesText(system string, msgs gjson.Result) string {
	var turns []turn
	for _, m := range msgs.Array() {
		if !m.IsObject() {
			continue
		}
		turns = append(turns, turn{role: m.Get("role").String(), text: contentText(m.Get("content"))})
	}
	return joinTurns(system, turns)
}

// joinTurns joins a system text and turns into one text.
func joinTurns(system string, turns []turn) string {
	if system == "" && len(turns) == 1 {
		return turns[0].text
	}
	var b strings.Builder
	if system != "" {
		b.WriteString("system: ")
		b.WriteString(system)
	}
	for _, t := range turns {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if t.role != "" {
			b.WriteString(t.role)
			b.WriteString(": ")
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// contentText is the text of a message content: a string, or the text of
// each part of an array of content parts or blocks, one per line.
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	if !c.IsArray() {
		return ""
	}
	var parts []string
	for _, p := range c.Array() {
		if p.Type == gjson.String {
			parts = append(parts, p.Str)
		} else if t := p.Get("text"); t.Type == gjson.String {
			parts = append(parts, t.Str)
		}
	}
	return strings.Join(parts, "\n")
}

// assistantText is the assistant's text in a response body of any of the
// three wire shapes: chat choices.0.message.content, messages
// content[*].text, responses output_text or the texts of its output
// messages. ok is false when the body is none of them.
func assistantText(payload json.RawMessage) (text string, ok bool) {
	if len(payload) == 0 {
		return "", false
	}
	r := gjson.ParseBytes(payload)
	if msg := r.Get("choices.0.message"); msg.Exists() {
		return contentText(msg.Get("content")), true
	}
	if r.Get("type").Str == "message" {
		var parts []string
		for _, b := range r.Get("content").Array() {
			if b.Get("type").Str == "text" {
				parts = append(parts, b.Get("text").String())
			}
		}
		return strings.Join(parts, "\n"), true
	}
	if ot := r.Get("output_text"); ot.Type == gjson.String {
		return ot.Str, true
	}
	if out := r.Get("output"); out.IsArray() {
		var parts []string
		for _, item := range out.Array() {
			if item.Get("type").Str != "message" {
				continue
			}
			for _, c := range item.Get("content").Array() {
				if c.Get("type").Str == "output_text" {
					parts = append(parts, c.Get("text").String())
				}
			}
		}
		return strings.Join(parts, "\n"), true
	}
	return "", false
}

// compactJSON is raw without insignificant whitespace.
func compactJSON(raw string) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return raw
	}
	return buf.String()
}

// jsonString encodes s as a JSON string value.
func jsonString(s string) json.RawMessage {
	data, _ := json.Marshal(s) // a string always encodes
	return data
}
