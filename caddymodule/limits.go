package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/gateway/internal/jsonlimit"
	"github.com/modelgate/gateway/translate"
)

// LimitsConfig bounds what one request may ask of the gateway. Each limit
// is answered with its own status and a SPEC error body before more of the
// request is read than the limit allows: a declared Content-Length over a
// size limit is refused before any of the body is read. A zero field takes
// its default.
type LimitsConfig struct {
	// EmbeddingsBodySize bounds a POST /embeddings body, in bytes (413
	// request_too_large). Default 8 MiB. The other model calls are bounded
	// by the app's max_body_size (default 32 MiB).
	EmbeddingsBodySize int64 `json:"embeddings_body_size,omitempty"`
	// APIBodySize bounds a body of the reliability API (feedback,
	// operations, datasets, evaluators, evaluations), in bytes (413).
	// Default 16 MiB: 1000 dataset items of 16 KiB each.
	APIBodySize int64 `json:"api_body_size,omitempty"`
	// MaxJSONDepth is the deepest nesting of objects and arrays a body may
	// have (400 json_too_deep). Default 128.
	MaxJSONDepth int `json:"max_json_depth,omitempty"`
	// MaxJSONMembers is the most values a body's objects and arrays may
	// hold in all (400 json_too_large). Default 250000.
	MaxJSONMembers int `json:"max_json_members,omitempty"`
	// MaxMessages is the most messages (chat and messages `messages`,
	// responses `input` items) one call may send (400 too_many_messages).
	// Default 10000.
	MaxMessages int `json:"max_messages,omitempty"`
	// MaxTools is the most tools one call may declare (400
	// too_many_tools). Default 512.
	MaxTools int `json:"max_tools,omitempty"`
	// MaxHeaderSize bounds the request line and headers of a request to
	// the gateway's endpoints, in bytes (431 headers_too_large). Default
	// 64 KiB. Caddy's server option max_header_size (default 1 MB) is the
	// hard limit below it, answered by Go's server without a JSON body.
	MaxHeaderSize int `json:"max_header_size,omitempty"`
	// MaxConcurrentCalls bounds the model calls one org has in flight
	// across all its keys (429 too_many_concurrent_calls, with
	// Retry-After). Default 256.
	MaxConcurrentCalls int `json:"max_concurrent_calls,omitempty"`
	// BodyReadTimeout bounds the time to read a request body, from the
	// moment the handler starts reading it: a client that sends its body
	// too slowly is answered 408 request_timeout and its connection
	// closed. Default 60s.
	BodyReadTimeout caddy.Duration `json:"body_read_timeout,omitempty"`
}

// Defaults of LimitsConfig.
const (
	defaultCompletionBody     = 32 << 20
	defaultEmbeddingsBody     = 8 << 20
	defaultAPIBody            = 16 << 20
	defaultMaxJSONDepth       = 128
	defaultMaxJSONMembers     = 250_000
	defaultMaxMessages        = 10_000
	defaultMaxTools           = 512
	defaultMaxHeaderSize      = 64 << 10
	defaultMaxConcurrentCalls = 256
	defaultBodyReadTimeout    = 60 * time.Second
)

// limits is LimitsConfig with its defaults applied.
type limits struct {
	completionBody, embeddingsBody, apiBody int64
	json                                    jsonlimit.Limits
	maxMessages, maxTools                   int
	maxHeader                               int
	maxConcurrent                           int
	bodyTimeout                             time.Duration
}

// resolve applies the defaults; completionBody is the app's MaxBodyBytes.
func (c *LimitsConfig) resolve(completionBody int64) (limits, error) {
	if c == nil {
		c = new(LimitsConfig)
	}
	l := limits{
		completionBody: completionBody,
		embeddingsBody: pick64(c.EmbeddingsBodySize, defaultEmbeddingsBody),
		apiBody:        pick64(c.APIBodySize, defaultAPIBody),
		json: jsonlimit.Limits{
			MaxDepth:   pick(c.MaxJSONDepth, defaultMaxJSONDepth),
			MaxMembers: pick(c.MaxJSONMembers, defaultMaxJSONMembers),
		},
		maxMessages:   pick(c.MaxMessages, defaultMaxMessages),
		maxTools:      pick(c.MaxTools, defaultMaxTools),
		maxHeader:     pick(c.MaxHeaderSize, defaultMaxHeaderSize),
		maxConcurrent: pick(c.MaxConcurrentCalls, defaultMaxConcurrentCalls),
		bodyTimeout:   time.Duration(c.BodyReadTimeout),
	}
	if l.bodyTimeout <= 0 {
		l.bodyTimeout = defaultBodyReadTimeout
	}
	if l.completionBody <= 0 {
		l.completionBody = defaultCompletionBody
	}
	for name, v := range map[string]int64{
		"embeddings_body_size": c.EmbeddingsBodySize, "api_body_size": c.APIBodySize,
		"max_json_depth": int64(c.MaxJSONDepth), "max_json_members": int64(c.MaxJSONMembers),
		"max_messages": int64(c.MaxMessages), "max_tools": int64(c.MaxTools),
		"max_header_size": int64(c.MaxHeaderSize), "max_concurrent_calls": int64(c.MaxConcurrentCalls),
	} {
		if v < 0 {
			return l, fmt.Errorf("limits: %s must not be negative", name)
		}
	}
	return l, nil
}

func pick(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func pick64(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// bodyLimit is the body size limit of a model call endpoint.
func (l *limits) bodyLimit(d translate.Dialect) int64 {
	if d == translate.Embeddings {
		return l.embeddingsBody
	}
	return l.completionBody
}

// errTooLarge is the 413 of a body over limit bytes.
func errTooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
		message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// checkHeaderSize refuses a request whose request line and headers add up
// to more than limit bytes.
func checkHeaderSize(r *http.Request, limit int) *apiError {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	if n <= limit {
		return nil
	}
	return &apiError{status: http.StatusRequestHeaderFieldsTooLarge, typ: "invalid_request_error", code: "headers_too_large",
		message: fmt.Sprintf("the request line and headers are larger than %d bytes", limit)}
}

// checkShape refuses a model call body that nests too deeply or holds too
// many values. It runs before the body is parsed; checkCounts runs on
// what the parse counted.
func (l *limits) checkShape(body []byte) *apiError {
	switch jsonlimit.Check(body, l.json) {
	case jsonlimit.TooDeep:
		return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "json_too_deep",
			message: fmt.Sprintf("the request body nests objects and arrays deeper than %d levels", l.json.MaxDepth)}
	case jsonlimit.TooManyMembers:
		return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "json_too_large",
			message: fmt.Sprintf("the request body holds more than %d values", l.json.MaxMembers)}
	}
	return nil
}

// checkCounts refuses a parsed model call that sends too many messages
// (responses: input items) or declares too many tools; the validators
// count them as they read them, so no second pass over the body is made.
func (l *limits) checkCounts(d translate.Dialect, req *translate.Request) *apiError {
	if d == translate.Embeddings {
		return nil
	}
	msgs := "messages"
	if d == translate.Responses {
		msgs = "input"
	}
	if req.Messages > l.maxMessages {
		e := errInvalid(msgs, fmt.Sprintf("at most %d messages may be sent in one call, got %d", l.maxMessages, req.Messages))
		e.code = "too_many_messages"
		return e
	}
	if req.Tools > l.maxTools {
		e := errInvalid("tools", fmt.Sprintf("at most %d tools may be declared in one call, got %d", l.maxTools, req.Tools))
		e.code = "too_many_tools"
		return e
	}
	return nil
}

// readBody reads the request body under the size limit. A declared
// Content-Length over the limit is refused before any of the body is
// read; a body without one is read up to the limit and refused at the
// first byte past it. Either way the answer asks for the connection to be
// closed; the caller drains what the client still sends once it has
// answered (linger.Discard), so that the client reads the 413. A body
// whose read time runs out (see armBodyTimeout) is a 408.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	if _, ok := r.Body.(*timedBody); !ok {
		// A caller that set no time limit gets the default one.
		defer armBodyTimeout(w, r, defaultBodyReadTimeout)()
	}
	if tb, ok := r.Body.(*timedBody); ok {
		// The read is over, whatever its outcome, when this returns.
		defer tb.finish()
	}
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		return nil, errTooLarge(limit)
	}
	var body []byte
	var err error
	if r.ContentLength > 0 {
		// The exact size is known: one allocation. The server ends the
		// body at its declared length.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			w.Header().Set("Connection", "close")
			return nil, errTooLarge(limit)
		case isBodyTimeout(err):
			w.Header().Set("Connection", "close")
			return nil, &apiError{status: http.StatusRequestTimeout, typ: "invalid_request_error", code: "request_timeout",
				message: "the request body was not received in time"}
		}
		return nil, errInvalid("", "could not read the request body")
	}
	return body, nil
}

// errBodyTimeout is the read error of a body whose time ran out. It is a
// timeout in net.Error's sense, which is how the reliability API, on the
// other side of a package boundary, tells it apart.
var errBodyTimeout error = bodyTimeoutError{}

type bodyTimeoutError struct{}

func (bodyTimeoutError) Error() string   { return "request body read timed out" }
func (bodyTimeoutError) Timeout() bool   { return true }
func (bodyTimeoutError) Temporary() bool { return false }

// isBodyTimeout reports whether a body read failed because its time ran
// out (ours, or a deadline of the server's).
func isBodyTimeout(err error) bool {
	return errors.Is(err, errBodyTimeout) || errors.Is(err, os.ErrDeadlineExceeded)
}

// armBodyTimeout bounds the time to read r's body to timeout, from now:
// when it runs out, a read in progress is interrupted (the connection's
// read deadline is moved to the past) and later reads fail. The returned
// function ends the watch; call it once the body is read or the handler
// is done. Caddy's read_idle_timeout resets the connection's deadline on
// every read, so a slow trickle would never trip a deadline alone: the
// timer and the check after each read are what bound the total.
func armBodyTimeout(w http.ResponseWriter, r *http.Request, timeout time.Duration) func() {
	if r.Body == nil || r.Body == http.NoBody || timeout <= 0 {
		return func() {}
	}
	b := &timedBody{ReadCloser: r.Body, deadline: time.Now().Add(timeout), rc: http.NewResponseController(w), left: r.ContentLength}
	b.timer = time.AfterFunc(timeout, b.expire)
	r.Body = b
	return func() { b.finish() }
}

// timedBody is a request body with a time limit.
type timedBody struct {
	io.ReadCloser
	deadline time.Time
	rc       *http.ResponseController
	timer    *time.Timer
	// left is how much of a body of known length is still to come; the
	// watch ends when it reaches zero, as a reader of exactly that many
	// bytes never sees io.EOF.
	left int64
	mu   sync.Mutex
	// done is set once the body is read or the handler finished: the
	// timer must not touch the connection after that, since the server
	// reads from it again (the next request, or its check for a client
	// that went away).
	done    bool
	expired atomic.Bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	if b.expired.Load() {
		return 0, errBodyTimeout
	}
	n, err := b.ReadCloser.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err == io.EOF || (b.left == 0 && n > 0) {
		// The whole body arrived: if the timer fired meanwhile, the
		// connection's deadline is put back, as the server goes on
		// reading from it (for the next request, or to notice a client
		// that leaves).
		if b.finish() {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
		return n, err
	}
	if b.expired.Load() || time.Now().After(b.deadline) {
		b.expired.Store(true)
		return n, errBodyTimeout
	}
	return n, err
}

// expire interrupts a read in progress.
func (b *timedBody) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.expired.Store(true)
	_ = b.rc.SetReadDeadline(time.Now().Add(-time.Second))
}

// finish ends the watch; it reports whether the timer had already moved
// the connection's deadline.
func (b *timedBody) finish() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return false
	}
	b.done = true
	b.timer.Stop()
	return b.expired.Load()
}

// orgSlots counts each org's model calls in flight, across every config
// sharing the store, so that a reload does not double the limit.
type orgSlots struct {
	m sync.Map // org id -> *atomic.Int64
}

// acquire takes one of the org's limit slots; the returned function
// gives it back.
func (s *orgSlots) acquire(orgID string, limit int) (func(), bool) {
	v, ok := s.m.Load(orgID)
	if !ok {
		v, _ = s.m.LoadOrStore(orgID, new(atomic.Int64))
	}
	n := v.(*atomic.Int64)
	if n.Add(1) > int64(limit) {
		n.Add(-1)
		return nil, false
	}
	return func() { n.Add(-1) }, true
}

// acquireCallSlot takes one of the org's concurrent call slots, or
// answers 429 with Retry-After.
func (a *App) acquireCallSlot(w http.ResponseWriter, p *principal) (func(), *apiError) {
	sh := a.rt.shared
	if sh == nil {
		return func() {}, nil
	}
	release, ok := sh.slots.acquire(p.orgID, a.limits.maxConcurrent)
	if ok {
		return release, nil
	}
	w.Header().Set("Retry-After", strconv.Itoa(1))
	return nil, &apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "too_many_concurrent_calls",
		message: fmt.Sprintf("this organisation already has %d calls in flight, the most it may have", a.limits.maxConcurrent)}
}
