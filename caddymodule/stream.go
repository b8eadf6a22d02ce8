package caddymodule

import (
	"net/http"
	"sync"
	"time"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// streamState carries one streamed attempt from the upstream's SSE bytes to
// the client: split into events, transcoded when the dialects differ, and
// written in the client's shape as soon as whole events are formed.
type streamState struct {
	c      *call
	w      http.ResponseWriter
	rc     *http.ResponseController
	cand   routing.Candidate
	reader translate.SSEReader
	tc     translate.Transcoder
	cs     translate.ClientStream
	emit   translate.Emit
	out    []byte
	// started is set once the client's headers are written.
	started bool
}

func newStreamState(c *call, w http.ResponseWriter, cand routing.Candidate, ud translate.Dialect) *streamState {
	s := &streamState{
		c: c, w: w, rc: http.NewResponseController(w), cand: cand,
		tc:  translate.NewTranscoder(ud, c.d),
		cs:  translate.NewClientStream(c.d, c.id, c.req.Model, c.req.IncludeUsage),
		out: getStreamBuf(),
	}
	s.emit = func(event string, data []byte) { s.out = s.cs.Event(s.out, event, data) }
	return s
}

// streamBufs recycles the output buffers of streams: a stream's events
// pass through one on their way to the client, and a buffer that grew to
// hold a burst of events is worth keeping for the next stream.
var streamBufs sync.Pool

// maxPooledStreamBuf keeps the buffers of unusual bursts out of the pool.
const maxPooledStreamBuf = 256 << 10

func getStreamBuf() []byte {
	if b, ok := streamBufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 16<<10)
}

// release hands the output buffer back once the stream is over; nothing
// holds on to it, as the client's writer copies what it is given.
func (s *streamState) release() {
	if s.out != nil && cap(s.out) <= maxPooledStreamBuf {
		b := s.out[:0]
		streamBufs.Put(&b)
	}
	s.out = nil
}

// write implements streamSink. An upstream event that cannot be passed on
// ends the writes with a *streamDefect; what the events before it produced
// stays in out, for fail to send ahead of the error event.
func (s *streamState) write(p []byte) error {
	s.reader.Write(p)
	for ev, ok := s.reader.Next(); ok; ev, ok = s.reader.Next() {
		if s.tc == nil {
			s.out = s.cs.Event(s.out, string(ev.Event), ev.Data)
		} else if err := s.tc.Event(ev, s.emit); err != nil {
			return &streamDefect{err: err}
		}
		if err := s.cs.Err(); err != nil {
			return &streamDefect{err: err}
		}
	}
	return s.send()
}

// send writes what is ready; the client's headers go out with the first bytes.
func (s *streamState) send() error {
	if len(s.out) == 0 {
		return nil
	}
	if !s.started {
		s.c.firstByte = time.Now()
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	_, err := s.w.Write(s.out)
	s.out = s.out[:0]
	return err
}

// flush implements streamSink.
func (s *streamState) flush() error {
	if !s.started {
		return nil
	}
	return s.rc.Flush()
}

// finish closes a stream that the upstream completed: the held events go
// out with the delivery block, then the terminator.
func (s *streamState) finish(cand routing.Candidate) {
	if s.tc != nil {
		_ = s.tc.End(s.emit)
	}
	if f, ok := s.cs.(interface{ Failed() bool }); ok && f.Failed() {
		// The upstream put an error in the stream; the client has it as
		// the last event.
		rec := s.recordFailed(cand, "the upstream sent an error inside the stream")
		s.c.record(rec)
		_ = s.send()
		_ = s.flush()
		return
	}
	usage := s.usage()
	result := s.cs.Result()
	dl := s.c.newDelivery(cand, usage, result)
	s.out = s.cs.Close(s.out, dl.json())
	// Recorded before the last bytes leave: a client that has the whole
	// stream can always read its call back.
	s.c.record(s.c.successRecord(cand, usage, dl, streamPayload(s.c, usage, result), cand.Path.UpstreamModel))
	_ = s.send()
	_ = s.flush()
}

// fail ends a stream that broke after the client got its first bytes with
// the shape's own error event.
func (s *streamState) fail(cand routing.Candidate, message string) {
	s.out = s.cs.Fail(s.out, message)
	s.c.record(s.recordFailed(cand, message))
	_ = s.send()
	_ = s.flush()
}

// recordFailed is the record of a stream that did not complete; what the
// client got before the break is kept, and billed: the upstream produced
// it and the client received it.
func (s *streamState) recordFailed(cand routing.Candidate, message string) *reliability.Call {
	rec := s.c.failedRecord(cand, message)
	result := s.cs.Result()
	usage, estimated := s.deliveredUsage(result)
	setUsage(rec, usage)
	rec.UsageEstimated = estimated
	rec.ResponsePayload = streamPayload(s.c, usage, result)
	if cand.Provider != nil && s.started {
		billed, upstream := s.c.g.app.pricing.Bill(s.c.route.Served(cand), usage)
		billed = s.c.capToReservation(billed, usage)
		rec.CostUSD, rec.UpstreamCostUSD = billed, upstream
		if billed != nil && *billed > 0 {
			rec.ChargeUSD = *billed
		}
		s.c.g.app.chargeTokens(s.c.p, usage.InputTokens+usage.OutputTokens)
	}
	return rec
}

// usage is the usage reported so far: the upstream's own, by token class,
// when the stream is transcoded (the client's shape may not carry every
// class), or what the client's shape carries.
func (s *streamState) usage() translate.Usage {
	if s.tc != nil {
		if u := s.tc.Usage(); u.Known {
			return u
		}
	}
	return s.cs.Usage()
}

// deliveredUsage is the usage of a stream that ended before its end: the
// upstream's counts where they are final, or else an estimate, at least
// what the upstream has reported so far, of the prompt and of the text
// and tool calls relayed to the client. estimated says which.
func (s *streamState) deliveredUsage(result *translate.Result) (usage translate.Usage, estimated bool) {
	usage = s.usage()
	if usage.Known && s.cs.Done() {
		return usage, false
	}
	out := len(result.Text)
	for _, tc := range result.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	if usage.InputTokens <= 0 {
		usage.InputTokens = routing.EstimateTextTokens(len(s.c.canon))
	}
	usage.OutputTokens = max(usage.OutputTokens, routing.EstimateTextTokens(out))
	usage.Known = true
	return usage, true
}

// streamPayload is the record of a streamed answer: the chat.completion the
// stream amounts to.
func streamPayload(c *call, usage translate.Usage, r *translate.Result) []byte {
	return translate.AppendChatCompletion(nil, c.id, c.req.Model, c.start.Unix(), usage, r)
}
