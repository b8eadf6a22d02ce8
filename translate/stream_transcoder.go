package translate

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// A transcoder is a parser of the upstream's event vocabulary driving a
// writer of the client's, through dialect-neutral steps: a stream begins,
// text and tool calls arrive in pieces, blocks end, a finish reason and usage
// become known, the stream finishes. Three parsers and three writers cover
// the six directions, and each writer emits a client event as soon as the
// steps so far determine it.
type transcoder struct {
	parser streamParser
	writer streamWriter
}

// streamParser reads one upstream dialect's events.
type streamParser interface {
	// event turns one upstream event into steps on w. It returns an error
	// when the upstream reports a failure or breaks its own protocol.
	event(ev SSEEvent, w streamWriter, emit Emit) error
}

// streamWriter writes one client dialect's events. Keys name tool calls the
// way the upstream does (a chunk's tool index, a block index, an output
// index); writers number calls in their own way.
type streamWriter interface {
	// begin starts the stream with the upstream's id, model and creation
	// time (zero when the upstream has none). Every other step begins the
	// stream first if the upstream never did.
	begin(id, model string, created int64, emit Emit)
	// text adds a piece of assistant text.
	text(s string, emit Emit)
	// toolCall starts a tool call with its id and function name.
	toolCall(key int, id, name string, emit Emit)
	// toolArgs adds a piece of a started call's arguments JSON text.
	toolArgs(key int, s string, emit Emit)
	// endBlock ends the text or tool call in progress; a new one of another
	// kind ends it too.
	endBlock(emit Emit)
	// setFinish records the finish reason, in the chat vocabulary.
	setFinish(reason string, emit Emit)
	setUsage(u tokenUsage)
	// reported is the usage last set.
	reported() tokenUsage
	// finish emits the closing events; later steps do nothing.
	finish(emit Emit)
}

// Event implements Transcoder.
func (t *transcoder) Event(ev SSEEvent, emit Emit) error {
	return t.parser.event(ev, t.writer, emit)
}

// Usage implements Transcoder.
func (t *transcoder) Usage() Usage { return t.writer.reported().usage() }

// End implements Transcoder: a stream that ended without its terminal event
// is closed with what is known.
func (t *transcoder) End(emit Emit) error {
	t.writer.finish(emit)
	return nil
}

// streamHead is the state every writer keeps about the stream as a whole.
type streamHead struct {
	id      string
	model   string
	created int64
	began   bool
	done    bool
	reason  string
	usage   tokenUsage
	calls   []callKey
}

// callKey maps an upstream's key for a tool call to the writer's number for
// it.
type callKey struct {
	key, index int
}

// start records the stream's identity; it reports false when the stream had
// already begun.
func (h *streamHead) start(id, model string, created int64) bool {
	if h.began {
		return false
	}
	h.began = true
	h.id, h.model, h.created = id, model, createdOr(created)
	return true
}

func (h *streamHead) setUsage(u tokenUsage) {
	if !h.done {
		h.usage = u
	}
}

// reported implements streamWriter.
func (h *streamHead) reported() tokenUsage { return h.usage }

// callIndex returns the writer's number for a tool call, or -1.
func (h *streamHead) callIndex(key int) int {
	for _, c := range h.calls {
		if c.key == key {
			return c.index
		}
	}
	return -1
}

// blockKind is what a parser knows an upstream content block or output item
// to be: text, a tool call, or something the client dialects do not show
// (thinking, reasoning, server tools).
type blockKind uint8

const (
	blockOther blockKind = iota
	blockText
	blockTool
)

// ErrMalformedEvent is wrapped by the errors of an upstream stream event the
// gateway cannot read: data that is not JSON, or JSON without the members
// its type needs. Passing such an event on, or skipping it, would leave the
// client with a broken or silently incomplete stream, so the stream ends
// there with the client dialect's error event.
var ErrMalformedEvent = errors.New("malformed upstream stream event")

// errNotJSON reports an upstream event whose data is not JSON.
var errNotJSON = fmt.Errorf("%w: its data is not JSON", ErrMalformedEvent)

// errNotObject reports an upstream event whose data is JSON but not an
// object, which every event of every dialect is.
var errNotObject = fmt.Errorf("%w: its data is not a JSON object", ErrMalformedEvent)

// malformed reports an upstream event of type typ that lacks what its type
// needs.
func malformed(typ, what string) error {
	return fmt.Errorf("%w: %s %s", ErrMalformedEvent, typ, what)
}

// readEvent parses an upstream event's data, which must be a JSON object.
func readEvent(data []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(data) {
		return gjson.Result{}, errNotJSON
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return gjson.Result{}, errNotObject
	}
	return root, nil
}

// lacks reports the member path of an event of type typ, read as v, that is
// missing or not of the JSON type the event's type needs.
func lacks(typ, path string, v gjson.Result) error {
	if !v.Exists() {
		return malformed(typ, "has no "+path)
	}
	return malformed(typ, "has a "+path+" of the wrong JSON type")
}

// wants reports an event member read as v that is missing or not of JSON
// type t (an object, for gjson.JSON).
func wants(typ, path string, v gjson.Result, t gjson.Type) error {
	if v.Type == t && (t != gjson.JSON || v.Raw[0] == '{') {
		return nil
	}
	return lacks(typ, path, v)
}

// wantsItem reports an output item event of the responses shape whose
// output index or member path (read as v, of JSON type t) is missing or of
// the wrong type.
func wantsItem(typ string, index gjson.Result, path string, v gjson.Result, t gjson.Type) error {
	if index.Type != gjson.Number {
		return lacks(typ, "output_index", index)
	}
	return wants(typ, path, v, t)
}

// upstreamStreamError is a failure the upstream reported in the middle of a
// stream; its message is passed on to the client in the client's own error
// event.
type upstreamStreamError struct {
	message string
}

func (e *upstreamStreamError) Error() string {
	if e.message == "" {
		return "upstream stream error"
	}
	return "upstream stream error: " + e.message
}

// eventType returns an event's type: the "type" member of its data, which
// every event of the messages and responses shapes carries, or else its SSE
// event name.
func eventType(ev SSEEvent, dataType string) string {
	if dataType != "" {
		return dataType
	}
	return string(ev.Event)
}
