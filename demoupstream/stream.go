package demoupstream

import (
	"net/http"
)

// eventStream writes a server-sent event stream. Every event is flushed on
// its own so that clients, and the gateway's stream transcoders, see the
// same event boundaries and timing as with the real APIs. Streams are never
// compressed: a gzip layer would buffer events.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// cut is the number of content pieces after which the connection is
	// aborted ([[cut:N]]), or -1.
	cut  int
	sent int
	// err is the first write error: the client has gone, so later events
	// are dropped instead of written.
	err error
}

// openStream sends the headers of an event stream.
func openStream(w http.ResponseWriter, cut int) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w, rc: http.NewResponseController(w), cut: cut}
}

// emit writes one event: an "event:" line when name is not empty (Anthropic
// and Responses streams name their events, chat completions do not), the
// data line, and the blank line that ends the event.
func (s *eventStream) emit(name string, data []byte) {
	if s.err != nil {
		return
	}
	bp := getBuffer()
	b := (*bp)[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, '\n', '\n')
	_, s.err = s.w.Write(b)
	*bp = b
	putBuffer(bp)
	if s.err == nil {
		s.err = s.rc.Flush()
	}
}

// piece writes one content piece (a text delta or an arguments fragment).
// When the cut directive's count of pieces has already been sent, it aborts
// the connection instead.
func (s *eventStream) piece(name string, data []byte) {
	if s.cut >= 0 && s.sent >= s.cut {
		abort()
	}
	s.emit(name, data)
	s.sent++
}

// endPieces marks the end of the content pieces. A stream under a cut
// directive that has fewer pieces than N is aborted here, so that [[cut:N]]
// always produces a stream that never ends properly.
func (s *eventStream) endPieces() {
	if s.cut >= 0 {
		abort()
	}
}

// abort drops the connection without ending the response. net/http (and
// Caddy, which serves this handler) treat this panic value as a request to
// abort silently: HTTP/1.1 closes the connection before the terminating
// chunk, HTTP/2 resets the stream.
func abort() {
	panic(http.ErrAbortHandler)
}
