package translate

// A streamed call flows through two stages:
//
//	upstream SSE bytes -> SSEReader -> Transcoder (upstream dialect -> client dialect)
//	                   -> ClientStream (client dialect: ids, usage, delivery) -> client
//
// A Transcoder only converts event vocabularies; when both sides speak the
// same dialect there is none. A ClientStream owns what the gateway adds on the
// way out: the gateway's completion id on every event, the accumulated Result
// and Usage, holding back the final event until the delivery block can ride on
// it, and the shape's own error event when the upstream breaks mid-stream.

// Emit receives one client-shape event: the SSE event name (empty for
// chat-completions, which uses none) and its data.
type Emit func(event string, data []byte)

// Transcoder converts one upstream stream into the client's dialect, event by
// event, emitting client events as soon as they can be formed.
type Transcoder interface {
	// Event converts one upstream event. It returns an error, and the
	// stream cannot go on, when the upstream reports a failure or sends an
	// event it cannot read (see ErrMalformedEvent).
	Event(ev SSEEvent, emit Emit) error
	// End is called once when the upstream stream ends cleanly; it emits any
	// closing events the client dialect needs that the upstream did not send.
	End(emit Emit) error
	// Usage is the usage the upstream has reported so far, by token class:
	// the client's shape may have no field for some classes (chat has none
	// for cache writes), so billing reads it here.
	Usage() Usage
}

// ClientStream writes a client-shape event stream.
type ClientStream interface {
	// Event handles one event in the client's dialect and appends what may be
	// sent now to dst. Events that the delivery block must ride on are held
	// until Close.
	Event(dst []byte, event string, data []byte) []byte
	// Usage is the token usage seen so far.
	Usage() Usage
	// Result is the assistant output accumulated so far.
	Result() *Result
	// Done reports whether the stream's terminal event has been seen.
	Done() bool
	// Err is the upstream defect that broke the stream, an event it could
	// not pass on (see ErrMalformedEvent), or nil. Once it is set, Event
	// ignores further events, and the caller ends the stream with Fail.
	Err() error
	// Close appends the held events with delivery (a raw JSON object, or nil
	// for none) attached, and the stream's terminator.
	Close(dst []byte, delivery []byte) []byte
	// Fail appends the dialect's error event for a stream that broke after
	// its first byte reached the client, then the terminator if the dialect
	// has one.
	Fail(dst []byte, message string) []byte
}
