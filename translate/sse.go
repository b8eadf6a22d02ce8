package translate

import (
	"bytes"
)

// SSEEvent is one Server-Sent Event as it appeared on the wire. Event is the
// value of the "event:" field (empty when absent); Data is the joined value of
// its "data:" lines. Both alias the reader's buffer and are valid only until
// the next call to Next.
type SSEEvent struct {
	Event []byte
	Data  []byte
}

// SSEReader splits a byte stream into events incrementally. Feed it bytes as
// they arrive with Write and drain complete events with Next; nothing waits for
// the end of the stream.
type SSEReader struct {
	buf []byte
	off int
	// scan is where the search for the end of the pending event resumes:
	// the start of its last incomplete line. Lines before it are known not
	// to be blank, so a large event fed in small writes is scanned once.
	scan int
	data []byte
}

// Write appends bytes received from the upstream.
func (r *SSEReader) Write(p []byte) (int, error) {
	if r.off > 0 && r.off == len(r.buf) {
		r.buf = r.buf[:0]
		r.off, r.scan = 0, 0
	} else if r.off > 4096 && r.off > len(r.buf)/2 {
		n := copy(r.buf, r.buf[r.off:])
		r.buf = r.buf[:n]
		r.scan -= r.off
		r.off = 0
	}
	r.buf = append(r.buf, p...)
	return len(p), nil
}

// Buffered reports how many bytes are held that do not yet form a whole event.
func (r *SSEReader) Buffered() int { return len(r.buf) - r.off }

// Next returns the next complete event. ok is false when no complete event is
// buffered yet. Comment lines (":" prefix) and fields other than event and
// data are skipped; an event with neither is skipped too.
func (r *SSEReader) Next() (ev SSEEvent, ok bool) {
	for {
		rest := r.buf[r.off:]
		end, skip, resume := eventEnd(rest, max(r.scan-r.off, 0))
		if end < 0 {
			r.scan = r.off + resume
			return SSEEvent{}, false
		}
		block := rest[:end]
		r.off += end + skip
		r.scan = r.off
		ev = r.parse(block)
		if ev.Event != nil || ev.Data != nil {
			return ev, true
		}
	}
}

// eventEnd finds the blank line that ends the first event, looking at
// lines from lineStart on: it returns the length of the event block and the
// length of the separator, or end -1 and where the last incomplete line
// starts. Lines end in "\n" or "\r\n".
func eventEnd(b []byte, lineStart int) (end, skip, resume int) {
	for {
		i := bytes.IndexByte(b[lineStart:], '\n')
		if i < 0 {
			return -1, 0, lineStart
		}
		line := b[lineStart : lineStart+i]
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			return lineStart, i + 1, 0
		}
		lineStart += i + 1
	}
}

func (r *SSEReader) parse(block []byte) SSEEvent {
	var ev SSEEvent
	r.data = r.data[:0]
	hasData := false
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "event":
			ev.Event = value
		case "data":
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		}
	}
	if hasData {
		ev.Data = r.data
		if ev.Data == nil {
			ev.Data = []byte{}
		}
	}
	return ev
}

// AppendSSE appends one event in wire form: an optional "event:" line, one
// "data:" line and the blank line that ends it. data must not contain
// newlines (compact JSON never does).
func AppendSSE(dst []byte, event string, data []byte) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}
