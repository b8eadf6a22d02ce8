package translate

import "github.com/tidwall/gjson"

// messagesStreamParser reads messages-shape events. Input tokens arrive in
// message_start and output tokens in message_delta (which may repeat the
// input count, cumulatively). Thinking and server-tool blocks are skipped.
type messagesStreamParser struct {
	// kinds holds what each content block is, by index.
	kinds []blockKind
	usage tokenUsage
}

func (p *messagesStreamParser) event(ev SSEEvent, w streamWriter, emit Emit) error {
	if !gjson.ValidBytes(ev.Data) {
		return errNotJSON
	}
	root := gjson.ParseBytes(ev.Data)
	switch eventType(ev, root.Get("type").Str) {
	case "message_start":
		msg := root.Get("message")
		p.usage = anthropicUsage(msg.Get("usage"))
		w.setUsage(p.usage)
		w.begin(msg.Get("id").Str, msg.Get("model").Str, 0, emit)
	case "content_block_start":
		index := int(root.Get("index").Int())
		cb := root.Get("content_block")
		switch cb.Get("type").Str {
		case "text":
			p.setKind(index, blockText)
			w.text(cb.Get("text").Str, emit)
		case "tool_use":
			p.setKind(index, blockTool)
			w.toolCall(index, cb.Get("id").Str, cb.Get("name").Str, emit)
			// The input normally streams as deltas from an empty object;
			// an upstream that sends it whole here is read the same way.
			if in := cb.Get("input"); in.IsObject() && hasMembers(in) {
				w.toolArgs(index, compactJSON(in.Raw), emit)
			}
		default:
			p.setKind(index, blockOther)
		}
	case "content_block_delta":
		index := int(root.Get("index").Int())
		delta := root.Get("delta")
		switch p.kind(index) {
		case blockText:
			if delta.Get("type").Str == "text_delta" {
				w.text(delta.Get("text").Str, emit)
			}
		case blockTool:
			if delta.Get("type").Str == "input_json_delta" {
				w.toolArgs(index, delta.Get("partial_json").Str, emit)
			}
		}
	case "content_block_stop":
		if p.kind(int(root.Get("index").Int())) != blockOther {
			w.endBlock(emit)
		}
	case "message_delta":
		if u := root.Get("usage"); u.IsObject() {
			d := anthropicUsage(u)
			if !u.Get("input_tokens").Exists() {
				d.input, d.cached = p.usage.input, p.usage.cached
			}
			d.known = true
			p.usage = d
			w.setUsage(d)
		}
		if sr := root.Get("delta.stop_reason").Str; sr != "" {
			w.setFinish(chatFinishFromAnthropic(sr), emit)
		}
	case "message_stop":
		w.finish(emit)
	case "error":
		return &upstreamStreamError{message: root.Get("error.message").Str}
	}
	return nil
}

func (p *messagesStreamParser) setKind(index int, k blockKind) {
	if index < 0 || index > 1<<16 {
		return
	}
	for len(p.kinds) <= index {
		p.kinds = append(p.kinds, blockOther)
	}
	p.kinds[index] = k
}

func (p *messagesStreamParser) kind(index int) blockKind {
	if index < 0 || index >= len(p.kinds) {
		return blockOther
	}
	return p.kinds[index]
}

// hasMembers reports whether a value is an object with at least one member.
func hasMembers(obj gjson.Result) bool {
	if !obj.IsObject() {
		return false
	}
	found := false
	obj.ForEach(func(_, _ gjson.Result) bool {
		found = true
		return false
	})
	return found
}
