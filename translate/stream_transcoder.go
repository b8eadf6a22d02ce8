package translate

import "errors"

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
	// finish emits the closing events; later steps do nothing.
	finish(emit Emit)
}

// Event implements Transcoder.
func (t *transcoder) Event(ev SSEEvent, emit Emit) error {
	return t.parser.event(ev, t.writer, emit)
}

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

// errNotJSON reports an upstream event whose data is not JSON.
var errNotJSON = errors.New("upstream sent a stream event that is not JSON")

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
