package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Prompt is the shape-independent content of a prompt: the same
// conversation sent as chat completions, messages or responses reads into
// the same Prompt, and its canonical encoding is what the prompt and
// exchange fingerprints hash.
type Prompt struct {
	// System is the system text: the pieces from system, instructions and
	// system or developer messages, in order, joined with "\n".
	System string
	// Turns are the conversation in order. Consecutive turns never share a
	// role: the parts of same-role messages in a row merge into one turn,
	// as shapes that require alternating roles would have sent them.
	Turns []Turn
}

// Turn is what one party said.
type Turn struct {
	// Role is "user", "assistant" or "tool".
	Role string
	// Parts are the turn's content in order.
	Parts []Part
}

// Part is one piece of a turn. Type says which fields are set: "text"
// (Text), "image" (URL), "tool_call" (ID, Name, Arguments) or "tool_result"
// (ID of the call it answers, Text). A block of a kind the Prompt does not
// model (a document, a file, a built-in tool's call) is kept opaque: Type is
// the block's own type and Text its canonical JSON.
type Part struct {
	// Type is "text", "image", "tool_call", "tool_result", or the type of an
	// opaque block.
	Type string
	// Text is the text of a text part or a tool result.
	Text string
	// URL locates an image; an inline image is a data URL
	// ("data:<media_type>;base64,<data>"), so the same image reads the same
	// whichever shape carried it.
	URL string
	// ID is a tool call's id, or for a tool result the id of its call.
	ID string
	// Name is the called tool's name.
	Name string
	// Arguments is the canonical JSON of a tool call's arguments.
	Arguments string
}

// ChatPrompt reads the prompt of a chat-completions request body. The body
// should have passed ParseChat; anything else reads as far as it can.
func ChatPrompt(body []byte) Prompt {
	var b promptBuilder
	gjson.Parse(string(body)).Get("messages").ForEach(func(_, msg gjson.Result) bool {
		var f chatMessageFields
		msg.ForEach(func(k, v gjson.Result) bool { return keepFirst(f.field(k.Str), v) })
		switch f.role.Str {
		case "system", "developer":
			b.system(joinText(f.content))
		case "user":
			b.content("user", f.content)
		case "assistant":
			b.content("assistant", f.content)
			if !f.toolCalls.IsArray() {
				break
			}
			f.toolCalls.ForEach(func(_, call gjson.Result) bool {
				b.add("assistant", Part{
					Type:      "tool_call",
					ID:        call.Get("id").Str,
					Name:      call.Get("function.name").Str,
					Arguments: canonicalArguments(call.Get("function.arguments").Str),
				})
				return true
			})
		case "tool":
			b.toolResult(f.toolCallID.Str, f.content)
		}
		return true
	})
	return b.p
}

// MessagesPrompt reads the prompt of a messages request body. The body
// should have passed ParseMessages; anything else reads as far as it can.
// Tool results, which this shape sends inside user messages, become tool
// turns of their own.
func MessagesPrompt(body []byte) Prompt {
	var b promptBuilder
	var system, messages gjson.Result
	gjson.Parse(string(body)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "system":
			return keepFirst(&system, v)
		case "messages":
			return keepFirst(&messages, v)
		}
		return true
	})
	b.system(joinText(system))
	messages.ForEach(func(_, msg gjson.Result) bool {
		var m messageFields
		msg.ForEach(func(k, v gjson.Result) bool { return keepFirst(m.field(k.Str), v) })
		switch m.role.Str {
		case "system":
			b.system(joinText(m.content))
		case "user", "assistant":
			b.content(m.role.Str, m.content)
		}
		return true
	})
	return b.p
}

// ResponsesPrompt reads the prompt of a responses request body. The body
// should have passed ParseResponses; anything else reads as far as it can.
// instructions lead the system text; a string input is one user turn;
// function_call and function_call_output items are tool calls and results.
func ResponsesPrompt(body []byte) Prompt {
	var b promptBuilder
	var instructions, input gjson.Result
	gjson.Parse(string(body)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "instructions":
			return keepFirst(&instructions, v)
		case "input":
			return keepFirst(&input, v)
		}
		return true
	})
	b.system(instructions.Str)
	if input.Type == gjson.String {
		b.add("user", Part{Type: "text", Text: input.Str})
		return b.p
	}
	input.ForEach(func(_, item gjson.Result) bool {
		var it inputItemFields
		item.ForEach(func(k, v gjson.Result) bool { return keepFirst(it.field(k.Str), v) })
		switch it.typ.Str {
		case "function_call":
			b.add("assistant", Part{
				Type:      "tool_call",
				ID:        it.callID.Str,
				Name:      it.name.Str,
				Arguments: canonicalArguments(it.arguments.Str),
			})
		case "function_call_output":
			b.toolResult(it.callID.Str, it.output)
		case "message", "":
			switch it.role.Str {
			case "system", "developer":
				b.system(joinText(it.content))
			case "user", "assistant":
				b.content(it.role.Str, it.content)
			}
		case "reasoning":
			// One model's private reasoning, as thinking blocks are.
		default:
			// Other items are the model's built-in tool calls and their
			// outputs, or references to stored items: kept opaque, like
			// blocks the Prompt does not model.
			role := "assistant"
			if strings.HasSuffix(it.typ.Str, "_output") {
				role = "tool"
			}
			b.add(role, opaquePart(it.typ.Str, item))
		}
		return true
	})
	return b.p
}

// EmbeddingsPrompt reads the inputs of an embeddings request body as one
// user turn, so embeddings calls carry prompt fingerprints too. The body
// should have passed ParseEmbeddings.
func EmbeddingsPrompt(body []byte) Prompt {
	var b promptBuilder
	input := gjson.Parse(string(body)).Get("input")
	if input.Type == gjson.String {
		b.add("user", Part{Type: "text", Text: input.Str})
		return b.p
	}
	input.ForEach(func(_, item gjson.Result) bool {
		if item.Type == gjson.String {
			b.add("user", Part{Type: "text", Text: item.Str})
		} else {
			b.content("user", item.Get("content"))
		}
		return true
	})
	return b.p
}

// AppendCanonical appends the canonical encoding that fingerprints hash: a
// JSON object with keys sorted,
//
//	{"system":S,"turns":[{"parts":[P...],"role":R}...]}
//
// where each part P holds, in key order, "arguments" (tool calls), "id",
// "name", "text", "type" and "url", leaving out empty strings. Tool call
// ids are written as the call's ordinal in the prompt (0, 1, ...) and a
// tool result's id as the ordinal of the call it answers: ids are minted
// afresh by each upstream, so a replayed conversation must not change the
// encoding, while which result answers which call must. A result whose id
// matches no earlier call keeps its id as a string.
func (p *Prompt) AppendCanonical(dst []byte) []byte {
	dst = append(dst, `{"system":`...)
	dst = appendCanonicalString(dst, p.System)
	dst = append(dst, `,"turns":[`...)
	calls := 0
	for i := range p.Turns {
		t := &p.Turns[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"parts":[`...)
		for j := range t.Parts {
			part := &t.Parts[j]
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			switch part.Type {
			case "tool_call":
				dst = append(dst, `"arguments":`...)
				dst = appendArguments(dst, part.Arguments)
				dst = append(dst, `,"id":`...)
				dst = strconv.AppendInt(dst, int64(calls), 10)
				dst = append(dst, ',')
				calls++
			case "tool_result":
				dst = append(dst, `"id":`...)
				if n, ok := p.callOrdinal(i, j, part.ID); ok {
					dst = strconv.AppendInt(dst, int64(n), 10)
				} else {
					dst = appendCanonicalString(dst, part.ID)
				}
				dst = append(dst, ',')
			default:
				dst = appendMember(dst, "id", part.ID)
			}
			dst = appendMember(dst, "name", part.Name)
			dst = appendMember(dst, "text", part.Text)
			dst = append(dst, `"type":`...)
			dst = appendCanonicalString(dst, part.Type)
			if part.URL != "" {
				dst = append(dst, `,"url":`...)
				dst = appendCanonicalString(dst, part.URL)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, `],"role":`...)
		dst = appendCanonicalString(dst, t.Role)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// appendMember appends `"key":value,` for a non-empty value.
func appendMember(dst []byte, key, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	dst = appendCanonicalString(dst, value)
	return append(dst, ',')
}

// callOrdinal finds the tool call with the given id among the parts before
// turn ti, part pi, and returns its ordinal among all tool calls.
func (p *Prompt) callOrdinal(ti, pi int, id string) (int, bool) {
	n, found := 0, -1
	for i := 0; i <= ti; i++ {
		parts := p.Turns[i].Parts
		if i == ti {
			parts = parts[:pi]
		}
		for j := range parts {
			if parts[j].Type != "tool_call" {
				continue
			}
			if found < 0 && parts[j].ID == id {
				found = n
			}
			n++
		}
	}
	return found, found >= 0
}

// canonicalArguments returns tool-call arguments sent as JSON text in
// canonical form.
func canonicalArguments(s string) string {
	return string(appendArguments(nil, s))
}

// appendArguments appends tool-call arguments given as JSON text in
// canonical form. Empty text, which some upstreams send for a call without
// arguments, reads as {}; text that is not JSON (a truncated call) is kept
// as a JSON string so that the encoding stays valid JSON.
func appendArguments(dst []byte, s string) []byte {
	if strings.TrimSpace(s) == "" {
		return append(dst, "{}"...)
	}
	if !nestedWithin(s, maxDepth) || !gjson.Valid(s) {
		return appendCanonicalString(dst, s)
	}
	return AppendCanonical(dst, gjson.Parse(s))
}

// promptBuilder collects a Prompt while a body is read.
type promptBuilder struct {
	p Prompt
}

// system adds one piece of system text.
func (b *promptBuilder) system(text string) {
	if text == "" {
		return
	}
	if b.p.System != "" {
		b.p.System += "\n"
	}
	b.p.System += text
}

// add appends a part to the conversation, merging it into the last turn
// when that turn has the same role. Empty text parts are dropped: shapes
// differ in whether an assistant turn that only calls tools carries "" or
// no text at all.
func (b *promptBuilder) add(role string, part Part) {
	if part.Type == "text" && part.Text == "" {
		return
	}
	if n := len(b.p.Turns); n > 0 && b.p.Turns[n-1].Role == role {
		b.p.Turns[n-1].Parts = append(b.p.Turns[n-1].Parts, part)
		return
	}
	b.p.Turns = append(b.p.Turns, Turn{Role: role, Parts: []Part{part}})
}

// content adds a message's content, a string or an array of parts or blocks
// in any of the three shapes; their type names do not collide.
func (b *promptBuilder) content(role string, content gjson.Result) {
	if content.Type == gjson.String {
		b.add(role, Part{Type: "text", Text: content.Str})
		return
	}
	if !content.IsArray() {
		return
	}
	content.ForEach(func(_, block gjson.Result) bool {
		b.block(role, block)
		return true
	})
}

// block adds one content part or block. An image whose address cannot be
// read, and a block of a type the Prompt does not model (a document, a file,
// a server tool's call), becomes an opaque part: two prompts that differ
// only there must not fingerprint alike, or the response cache would mix
// them up. Thinking blocks are skipped: they are one model's private
// reasoning, which no other shape carries.
func (b *promptBuilder) block(role string, block gjson.Result) {
	var f promptBlockFields
	block.ForEach(func(k, v gjson.Result) bool { return keepFirst(f.field(k.Str), v) })
	var url string
	switch f.typ.Str {
	case "text", "input_text", "output_text":
		b.add(role, Part{Type: "text", Text: f.text.Str})
		return
	case "thinking", "redacted_thinking":
		return
	case "tool_use":
		input := "{}"
		if f.input.Exists() {
			input = string(AppendCanonical(nil, f.input))
		}
		b.add(role, Part{Type: "tool_call", ID: f.id.Str, Name: f.name.Str, Arguments: input})
		return
	case "tool_result":
		b.toolResult(f.toolUseID.Str, f.content)
		return
	case "image_url":
		// Chat nests the URL in an object; older clients send it bare.
		u := f.imageURL
		if u.IsObject() {
			u = u.Get("url")
		}
		url = u.Str
	case "input_image":
		url = f.imageURL.Str
	case "image":
		url = sourceURL(f.source)
	}
	if url != "" {
		b.add(role, Part{Type: "image", URL: url})
		return
	}
	b.add(role, opaquePart(f.typ.Str, block))
}

// toolResult adds the result of tool call id: its text, then any other
// content the tool returned (a screenshot, say) as parts of their own in the
// same tool turn.
func (b *promptBuilder) toolResult(id string, content gjson.Result) {
	b.add("tool", Part{Type: "tool_result", ID: id, Text: joinText(content)})
	if !content.IsArray() {
		return
	}
	content.ForEach(func(_, block gjson.Result) bool {
		if !isTextType(block.Get("type").Str) {
			b.block("tool", block)
		}
		return true
	})
}

// opaquePart keeps a block the Prompt does not model as its type and its
// canonical JSON.
func opaquePart(typ string, block gjson.Result) Part {
	return Part{Type: typ, Text: string(AppendCanonical(nil, block))}
}

// isTextType reports whether a part or block type carries text.
func isTextType(t string) bool {
	return t == "text" || t == "input_text" || t == "output_text"
}

// sourceURL returns the URL of a messages image source: its url, or its
// base64 data as the data URL a chat client would have sent.
func sourceURL(source gjson.Result) string {
	var f sourceFields
	source.ForEach(func(k, v gjson.Result) bool { return keepFirst(f.field(k.Str), v) })
	if f.typ.Str == "base64" {
		return "data:" + f.mediaType.Str + ";base64," + f.data.Str
	}
	return f.url.Str
}

// joinText returns the text of a string, or of the text parts of an array
// joined with "\n"; other parts are skipped.
func joinText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	if !v.IsArray() {
		return ""
	}
	var sb strings.Builder
	v.ForEach(func(_, part gjson.Result) bool {
		if isTextType(part.Get("type").Str) {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(part.Get("text").Str)
		}
		return true
	})
	return sb.String()
}

// keepFirst stores member v at dst, the place the prompt reads it from (nil
// for members it does not read). Of repeated keys the first is kept, as gjson
// lookups do; bodies read here have passed validation, which rejects repeats.
func keepFirst(dst *gjson.Result, v gjson.Result) bool {
	if dst != nil && !dst.Exists() {
		*dst = v
	}
	return true
}

// promptBlockFields are the members of a content part or block that the
// prompt reads, across the three shapes.
type promptBlockFields struct {
	typ, text, imageURL, source, id, name, input, toolUseID, content gjson.Result
}

func (f *promptBlockFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "text":
		return &f.text
	case "image_url":
		return &f.imageURL
	case "source":
		return &f.source
	case "id":
		return &f.id
	case "name":
		return &f.name
	case "input":
		return &f.input
	case "tool_use_id":
		return &f.toolUseID
	case "content":
		return &f.content
	}
	return nil
}

// inputItemFields are the members of a responses input item that the
// prompt reads.
type inputItemFields struct {
	typ, role, content, callID, name, arguments, output gjson.Result
}

func (f *inputItemFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "role":
		return &f.role
	case "content":
		return &f.content
	case "call_id":
		return &f.callID
	case "name":
		return &f.name
	case "arguments":
		return &f.arguments
	case "output":
		return &f.output
	}
	return nil
}
