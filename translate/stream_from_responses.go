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
	if !gjson.ValidBytes(ev.Data) {
		return errNotJSON
	}
	root := gjson.ParseBytes(ev.Data)
	switch eventType(ev, root.Get("type").Str) {
	case "response.created", "response.in_progress", "response.queued":
		p.begin(root.Get("response"), w, emit)
	case "response.output_item.added":
		p.addItem(int(root.Get("output_index").Int()), root.Get("item"), w, emit)
	case "response.output_text.delta", "response.refusal.delta":
		if it := p.item(int(root.Get("output_index").Int())); it != nil {
			it.streamed = true
		}
		w.text(root.Get("delta").Str, emit)
	case "response.function_call_arguments.delta":
		index := int(root.Get("output_index").Int())
		if it := p.item(index); it != nil && it.kind == blockTool {
			it.streamed = true
			w.toolArgs(index, root.Get("delta").Str, emit)
		}
	case "response.function_call_arguments.done":
		index := int(root.Get("output_index").Int())
		if it := p.item(index); it != nil && it.kind == blockTool && !it.streamed {
			it.streamed = true
			w.toolArgs(index, root.Get("arguments").Str, emit)
		}
	case "response.output_item.done":
		index := int(root.Get("output_index").Int())
		item := root.Get("item")
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
