package translate

import "github.com/tidwall/gjson"

// chatStreamParser reads chat.completion.chunk events. A call's first
// fragment carries its id and name; later fragments only its index and a
// piece of the arguments. The finish reason comes before the usage chunk, so
// the stream finishes at the usage (or at [DONE] when there is none).
type chatStreamParser struct {
	began   bool
	started []int
	finish  bool
}

func (p *chatStreamParser) event(ev SSEEvent, w streamWriter, emit Emit) error {
	if string(ev.Data) == "[DONE]" {
		w.finish(emit)
		return nil
	}
	if !gjson.ValidBytes(ev.Data) {
		return errNotJSON
	}
	root := gjson.ParseBytes(ev.Data)
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return &upstreamStreamError{message: e.Get("message").Str}
	}
	if !p.began {
		p.began = true
		w.begin(root.Get("id").Str, root.Get("model").Str, root.Get("created").Int(), emit)
	}
	eachElement(root.Get("choices"), func(c gjson.Result) bool {
		if c.Get("index").Int() != 0 {
			return true
		}
		delta := c.Get("delta")
		w.text(delta.Get("content").Str, emit)
		w.text(delta.Get("refusal").Str, emit)
		n := 0
		eachElement(delta.Get("tool_calls"), func(tc gjson.Result) bool {
			key := n
			if i := tc.Get("index"); i.Type == gjson.Number {
				key = int(i.Int())
			}
			n++
			if !p.isStarted(key) {
				p.started = append(p.started, key)
				w.toolCall(key, tc.Get("id").Str, tc.Get("function.name").Str, emit)
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
	if u := root.Get("usage"); u.IsObject() {
		w.setUsage(chatUsage(u))
		if p.finish {
			w.finish(emit)
		}
	}
	return nil
}

func (p *chatStreamParser) isStarted(key int) bool {
	for _, k := range p.started {
		if k == key {
			return true
		}
	}
	return false
}
