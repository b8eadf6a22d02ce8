package translate

import "github.com/tidwall/gjson"

// chatStreamParser reads chat.completion.chunk events. A call's first
// fragment carries its id and name; later fragments only its index and a
// piece of the arguments. The finish reason comes before the usage chunk, so
// the stream finishes at the usage (or at [DONE] when there is none).
type chatStreamParser struct {
	began   bool
	started []startedCall
	finish  bool
}

// chunkType names chat chunks in errors.
const chunkType = "chat.completion.chunk"

// startedCall is a tool call whose first fragment has been seen.
type startedCall struct {
	key int
	id  string
}

func (p *chatStreamParser) event(ev SSEEvent, w streamWriter, emit Emit) error {
	if string(ev.Data) == "[DONE]" {
		w.finish(emit)
		return nil
	}
	root, err := readEvent(ev.Data)
	if err != nil {
		return err
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return &upstreamStreamError{message: e.Get("message").Str}
	}
	choices := root.Get("choices")
	if !choices.IsArray() && choices.Type != gjson.Null && choices.Exists() {
		return lacks(chunkType, "choices", choices)
	}
	if !p.began {
		p.began = true
		w.begin(root.Get("id").Str, root.Get("model").Str, root.Get("created").Int(), emit)
	}
	eachElement(choices, func(c gjson.Result) bool {
		if !c.IsObject() {
			err = malformed(chunkType, "has a choice that is not an object")
			return false
		}
		if c.Get("index").Int() != 0 {
			return true
		}
		delta := c.Get("delta")
		if !delta.IsObject() && delta.Type != gjson.Null && delta.Exists() {
			err = lacks(chunkType, "choices.delta", delta)
			return false
		}
		w.text(delta.Get("content").Str, emit)
		w.text(delta.Get("refusal").Str, emit)
		eachElement(delta.Get("tool_calls"), func(tc gjson.Result) bool {
			id := tc.Get("id").Str
			key := p.callKey(tc.Get("index"), id)
			if !p.isStarted(key) {
				p.started = append(p.started, startedCall{key: key, id: id})
				w.toolCall(key, id, tc.Get("function.name").Str, emit)
			}
			w.toolArgs(key, tc.Get("function.arguments").Str, emit)
			return true
		})
		if fr := c.Get("finish_reason").Str; fr != "" {
			p.finish = true
			w.setFinish(fr, emit)
		}
		return true
	})
	if err != nil {
		return err
	}
	if u := root.Get("usage"); u.IsObject() {
		w.setUsage(chatUsage(u))
		if p.finish {
			w.finish(emit)
		}
	}
	return nil
}

// callKey returns the key of the call a fragment belongs to: its index, or,
// from servers that send none, the last call unless the fragment brings a new
// id.
func (p *chatStreamParser) callKey(index gjson.Result, id string) int {
	if index.Type == gjson.Number {
		return int(index.Int())
	}
	n := len(p.started)
	if n == 0 {
		return 0
	}
	if last := p.started[n-1]; id == "" || id == last.id {
		return last.key
	}
	key := 0
	for _, c := range p.started {
		key = max(key, c.key+1)
	}
	return key
}

func (p *chatStreamParser) isStarted(key int) bool {
	for _, c := range p.started {
		if c.key == key {
			return true
		}
	}
	return false
}
