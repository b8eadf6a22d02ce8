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
	root, err := readEvent(ev.Data)
	if err != nil {
		return err
	}
	typ := eventType(ev, root.Get("type").Str)
	index, member, err := messagesEventMembers(typ, root)
	if err != nil {
		return err
	}
	switch typ {
	case "message_start":
		msg := member
		p.usage = anthropicUsage(msg.Get("usage"))
		w.setUsage(p.usage)
		w.begin(msg.Get("id").Str, msg.Get("model").Str, 0, emit)
	case "content_block_start":
		cb := member
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
		delta := member
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
		if p.kind(index) != blockOther {
			w.endBlock(emit)
		}
	case "message_delta":
		if u := root.Get("usage"); u.IsObject() {
			d := anthropicUsage(u)
			if !u.Get("input_tokens").Exists() {
				d.input, d.cached, d.cacheWrite, d.cacheWrite1h = p.usage.input, p.usage.cached, p.usage.cacheWrite, p.usage.cacheWrite1h
			}
			d.known = true
			p.usage = d
			w.setUsage(d)
		}
		if sr := member.Get("stop_reason").Str; sr != "" {
			w.setFinish(chatFinishFromAnthropic(sr), emit)
		}
	case "message_stop":
		w.finish(emit)
	case "error":
		return &upstreamStreamError{message: root.Get("error.message").Str}
	}
	return nil
}

// messagesEventMembers reads what a messages-shape event's type needs, and
// checks it: the message of message_start, the delta of message_delta, the
// block index of the content block events and the block or delta they
// carry. Each is read once, for the caller to use. Event types whose
// content the gateway does not read (ping, and types added later) are not
// checked.
func messagesEventMembers(typ string, root gjson.Result) (index int, member gjson.Result, err error) {
	var path string
	indexed := false
	switch typ {
	case "message_start":
		path = "message"
	case "message_delta":
		path = "delta"
	case "content_block_start":
		path, indexed = "content_block", true
	case "content_block_delta":
		path, indexed = "delta", true
	case "content_block_stop":
		indexed = true
	default:
		return 0, gjson.Result{}, nil
	}
	if indexed {
		v := root.Get("index")
		if v.Type != gjson.Number {
			return 0, gjson.Result{}, lacks(typ, "index", v)
		}
		index = int(v.Int())
	}
	if path != "" {
		member = root.Get(path)
		if err := wants(typ, path, member, gjson.JSON); err != nil {
			return 0, gjson.Result{}, err
		}
	}
	return index, member, nil
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
