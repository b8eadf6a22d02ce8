package translate

import "github.com/tidwall/gjson"

// responsesStreamParser reads responses-shape events. Text arrives in
// output_text deltas, arguments in function_call_arguments deltas keyed by
// output index; response.completed or response.incomplete carry the status
// and usage. Items an upstream sends only whole (in their done event) are
// read from there.
type responsesStreamParser struct {
	began bool
	items []parsedItem
}

// parsedItem is what is known of an output item by its output index.
type parsedItem struct {
	kind     blockKind
	streamed bool
}

func (p *responsesStreamParser) event(ev SSEEvent, w streamWriter, emit Emit) error {
	root, err := readEvent(ev.Data)
	if err != nil {
		return err
	}
	// Each member an event's type needs is checked where it is read.
	switch typ := eventType(ev, root.Get("type").Str); typ {
	case "response.created", "response.in_progress", "response.queued":
		resp := root.Get("response")
		if err := wants(typ, "response", resp, gjson.JSON); err != nil {
			return err
		}
		p.begin(resp, w, emit)
	case "response.output_item.added":
		index, item := root.Get("output_index"), root.Get("item")
		if err := wantsItem(typ, index, "item", item, gjson.JSON); err != nil {
			return err
		}
		p.addItem(int(index.Int()), item, w, emit)
	case "response.output_text.delta", "response.refusal.delta":
		index, delta := root.Get("output_index"), root.Get("delta")
		if err := wantsItem(typ, index, "delta", delta, gjson.String); err != nil {
			return err
		}
		if it := p.item(int(index.Int())); it != nil {
			it.streamed = true
		}
		w.text(delta.Str, emit)
	case "response.function_call_arguments.delta":
		idx, delta := root.Get("output_index"), root.Get("delta")
		if err := wantsItem(typ, idx, "delta", delta, gjson.String); err != nil {
			return err
		}
		index := int(idx.Int())
		if it := p.item(index); it != nil && it.kind == blockTool {
			it.streamed = true
			w.toolArgs(index, delta.Str, emit)
		}
	case "response.function_call_arguments.done":
		idx, args := root.Get("output_index"), root.Get("arguments")
		if err := wantsItem(typ, idx, "arguments", args, gjson.String); err != nil {
			return err
		}
		index := int(idx.Int())
		if it := p.item(index); it != nil && it.kind == blockTool && !it.streamed {
			it.streamed = true
			w.toolArgs(index, args.Str, emit)
		}
	case "response.output_item.done":
		idx, item := root.Get("output_index"), root.Get("item")
		if err := wantsItem(typ, idx, "item", item, gjson.JSON); err != nil {
			return err
		}
		index := int(idx.Int())
		it := p.item(index)
		if it == nil {
			p.addItem(index, item, w, emit)
			it = p.item(index)
		}
		if it != nil && !it.streamed {
			it.streamed = true
			switch it.kind {
			case blockTool:
				w.toolArgs(index, item.Get("arguments").Str, emit)
			case blockText:
				w.text(textParts(item.Get("content")), emit)
			}
		}
		if it != nil && it.kind != blockOther {
			w.endBlock(emit)
		}
	case "response.completed", "response.incomplete":
		resp := root.Get("response")
		if err := wants(typ, "response", resp, gjson.JSON); err != nil {
			return err
		}
		p.begin(resp, w, emit)
		calledTools := false
		for _, it := range p.items {
			calledTools = calledTools || it.kind == blockTool
		}
		w.setUsage(responsesUsage(resp.Get("usage")))
		w.setFinish(chatFinishFromResponses(resp.Get("status").Str, resp.Get("incomplete_details.reason").Str, calledTools), emit)
		w.finish(emit)
	case "response.failed":
		msg := root.Get("response.error.message").Str
		if msg == "" {
			msg = "the upstream response failed"
		}
		return &upstreamStreamError{message: msg}
	case "error":
		return &upstreamStreamError{message: root.Get("message").Str}
	}
	return nil
}

func (p *responsesStreamParser) begin(resp gjson.Result, w streamWriter, emit Emit) {
	if p.began {
		return
	}
	p.began = true
	w.begin(resp.Get("id").Str, resp.Get("model").Str, resp.Get("created_at").Int(), emit)
}

// addItem records a new output item and starts a tool call for a function
// call.
func (p *responsesStreamParser) addItem(index int, item gjson.Result, w streamWriter, emit Emit) {
	if index < 0 || index > 1<<16 {
		return
	}
	for len(p.items) <= index {
		p.items = append(p.items, parsedItem{})
	}
	it := &p.items[index]
	switch item.Get("type").Str {
	case "message":
		it.kind = blockText
	case "function_call":
		it.kind = blockTool
		w.toolCall(index, item.Get("call_id").Str, item.Get("name").Str, emit)
		if args := item.Get("arguments").Str; args != "" {
			it.streamed = true
			w.toolArgs(index, args, emit)
		}
	}
}

func (p *responsesStreamParser) item(index int) *parsedItem {
	if index < 0 || index >= len(p.items) {
		return nil
	}
	return &p.items[index]
}
