package caddymodule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// upstream sends calls to one provider through Caddy's reverse proxy, which
// brings the transport, keep-alive pool, TLS, timeouts and load balancing
// across the provider's endpoints.
type upstream struct {
	provider *routing.Provider
	proxy    *reverseproxy.Handler
	basePath string
	host     string
	// headers are the provider's own request headers (content type,
	// credentials, configured extras) in canonical form, built once.
	headers http.Header
	// nameValue is the provider's name boxed once for the
	// {http.llm.provider} placeholder, which every served call sets.
	nameValue any
	// streamIdle is how long a streamed answer may go without a byte
	// before the attempt is cut off.
	streamIdle time.Duration
}

// defaultStreamIdleTimeout is ProviderConfig.StreamIdleTimeout's default:
// long enough for a model that thinks before it streams, short enough that
// a stalled upstream does not hold the client for good.
const defaultStreamIdleTimeout = 2 * time.Minute

// newUpstream builds and provisions the reverse proxy of one provider. It
// needs the real caddy.Context of the handler's Provision.
func newUpstream(ctx caddy.Context, p *routing.Provider, pc ProviderConfig) (*upstream, error) {
	tr := &reverseproxy.HTTPTransport{
		DialTimeout:           caddy.Duration(10 * time.Second),
		ResponseHeaderTimeout: caddy.Duration(5 * time.Minute),
	}
	if pc.DialTimeout > 0 {
		tr.DialTimeout = pc.DialTimeout
	}
	if pc.ResponseHeaderTimeout > 0 {
		tr.ResponseHeaderTimeout = pc.ResponseHeaderTimeout
	}
	compress := !loopbackOnly(p)
	if pc.Compression != nil {
		compress = *pc.Compression
	}
	tr.Compression = &compress
	if p.BaseURL.Scheme == "https" {
		tr.TLS = &reverseproxy.TLSConfig{InsecureSkipVerify: pc.InsecureSkipVerify, ServerName: p.BaseURL.Hostname()}
	}
	var pool reverseproxy.UpstreamPool
	for _, ep := range p.Endpoints {
		pool = append(pool, &reverseproxy.Upstream{Dial: hostPort(ep.Scheme, ep.Host)})
	}
	h := &reverseproxy.Handler{
		TransportRaw: caddyconfig.JSONModuleObject(tr, "protocol", "http", nil),
		Upstreams:    pool,
		// Streams are flushed event by event; buffered bodies never reach
		// the client through this writer, so flushing costs nothing there.
		FlushInterval: caddy.Duration(-1),
	}
	if pc.LBRetries > 0 {
		h.LoadBalancing = &reverseproxy.LoadBalancing{Retries: pc.LBRetries}
	}
	if err := h.Provision(ctx); err != nil {
		return nil, fmt.Errorf("provider %q: provisioning reverse proxy: %w", p.Name, err)
	}
	// The credentials are added by the transport, after the proxy has taken
	// its copy of the request: the proxy logs that copy (its "upstream
	// roundtrip" debug line, and the "aborting with incomplete response"
	// warning of a cut stream), so they never reach a log line.
	h.Transport = &providerTransport{base: h.Transport, creds: credentialHeaders(p)}
	u := &upstream{provider: p, proxy: h, basePath: p.BaseURL.Path, host: p.BaseURL.Host, headers: providerHeaders(p), nameValue: p.Name,
		streamIdle: defaultStreamIdleTimeout}
	if pc.StreamIdleTimeout > 0 {
		u.streamIdle = time.Duration(pc.StreamIdleTimeout)
	}
	return u, nil
}

// providerHeaders are the headers every request to p carries that hold no
// secret; the provider's transport adds credentialHeaders as the request
// leaves.
func providerHeaders(p *routing.Provider) http.Header {
	h := make(http.Header, 2)
	h.Set("Content-Type", "application/json")
	if p.Dialect == routing.DialectAnthropic {
		h.Set("Anthropic-Version", "2023-06-01")
	}
	return h
}

// loopbackOnly reports whether every endpoint of p is on this host.
func loopbackOnly(p *routing.Provider) bool {
	for _, ep := range p.Endpoints {
		h := ep.Hostname()
		if ip := net.ParseIP(h); !(h == "localhost" || ip != nil && ip.IsLoopback()) {
			return false
		}
	}
	return len(p.Endpoints) > 0
}

func hostPort(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if scheme == "https" {
		return net.JoinHostPort(host, "443")
	}
	return net.JoinHostPort(host, "80")
}

// forwardedHeaders are the client headers an upstream may see. Everything
// else, above all the client's gateway credential, stays behind.
var forwardedHeaders = [...]string{"User-Agent", "Anthropic-Beta", "Openai-Beta"}

// send makes one upstream attempt. Each attempt gets a fresh request: its own
// header map, a fresh body reader with a matching Content-Length, and no
// Accept-Encoding: Go's transport asks for gzip itself (unless the
// provider's compression is off) and decodes it, so the body can be read.
func (u *upstream) send(w *attemptWriter, r *http.Request, d translate.Dialect, body []byte) error {
	return u.sendPath(w, r, d.Path(), body)
}

// sendPath is send to the endpoint at path under the provider's base URL.
func (u *upstream) sendPath(w *attemptWriter, r *http.Request, path string, body []byte) (err error) {
	// A shallow copy: the header map is built fresh below (the client's is
	// never forwarded), and the proxy clones the request again itself.
	req := new(http.Request)
	*req = *r
	reqURL := *r.URL
	req.URL = &reqURL
	req.Header = make(http.Header, 8)
	for _, k := range forwardedHeaders {
		if v := r.Header[k]; len(v) > 0 {
			req.Header[k] = v
		}
	}
	// The provider's headers are the same on every attempt: their value
	// slices are built once and shared, as the proxy clones the header map
	// before it changes anything.
	for k, v := range u.headers {
		req.Header[k] = v
	}
	req.Method = http.MethodPost
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.URL.Path = u.basePath + path
	req.URL.RawPath = ""
	req.URL.RawQuery = ""
	req.Host = u.host
	req.RequestURI = ""
	injectTraceContext(req)
	if w.wantSSE {
		// A stream that goes quiet is cut off by cancelling the upstream
		// request: the proxy's read of the body fails, and the attempt ends
		// as a broken stream.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		req = req.WithContext(ctx)
		w.idle = &idleWatch{timeout: u.streamIdle, cancel: cancel}
		defer w.idle.stop()
	}

	defer func() {
		if rec := recover(); rec != nil {
			if rec != http.ErrAbortHandler { //nolint:errorlint // sentinel compared as Caddy panics with it
				panic(rec)
			}
			// The proxy aborts when copying the body fails after the
			// headers: the upstream broke mid-response, or the client left.
			err = errAborted
		}
		if err != nil && w.idle != nil && w.idle.fired.Load() {
			err = fmt.Errorf("%w: no data for %s", errStalled, w.idle.timeout)
		}
	}()
	return u.proxy.ServeHTTP(w, req, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil }))
}

var errAborted = errors.New("the response was cut off mid-way")

// errStalled is the error of a streamed attempt cut off by its idle timeout.
var errStalled = errors.New("the upstream stream stalled")

// streamDefect is an upstream stream the gateway cannot pass on: an event
// it cannot read, or a failure the upstream reported in its own dialect's
// terms. It ends the client's stream with its dialect's error event,
// carrying the message.
type streamDefect struct {
	err error
}

func (e *streamDefect) Error() string { return e.err.Error() }

func (e *streamDefect) Unwrap() error { return e.err }

// idleWatch cuts off a streamed attempt whose upstream sends nothing for
// timeout: started when the stream's headers arrive, pushed back by every
// write of the body, it cancels the upstream request when it runs out.
type idleWatch struct {
	timeout time.Duration
	cancel  context.CancelFunc
	timer   *time.Timer
	// fired is set once the watch cancelled the request.
	fired atomic.Bool
}

func (iw *idleWatch) start() {
	iw.timer = time.AfterFunc(iw.timeout, func() {
		iw.fired.Store(true)
		iw.cancel()
	})
}

// touch records that bytes arrived.
func (iw *idleWatch) touch() {
	if iw.timer != nil {
		iw.timer.Reset(iw.timeout)
	}
}

func (iw *idleWatch) stop() {
	if iw.timer != nil {
		iw.timer.Stop()
	}
}

// retryable reports whether an upstream status means "try the next path":
// the upstream refused or failed, not the request.
func retryable(status int) bool {
	switch {
	case status >= 500, status == http.StatusTooManyRequests, status == http.StatusRequestTimeout,
		status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusNotFound:
		return true
	}
	return false
}

// attemptMode is what an attemptWriter does with the upstream's body.
type attemptMode uint8

const (
	modeNone    attemptMode = iota
	modeCapture             // a failed attempt: keep a little of the body for the record
	modeBuffer              // a whole JSON body, rewritten after it arrives
	modeStream              // an SSE stream, transcoded event by event
)

// streamSink receives the body of a streamed attempt.
type streamSink interface {
	// write handles upstream bytes; it writes to the client when it has
	// whole events to send.
	write(p []byte) error
	// flush pushes what was written to the client.
	flush() error
}

// attemptWriter is the http.ResponseWriter one upstream attempt writes into.
// It decides at WriteHeader whether the attempt failed (the body is kept
// for the record and the next path is tried), is a whole body to buffer, or
// is a stream to pass through as it arrives.
type attemptWriter struct {
	header  http.Header
	status  int
	mode    attemptMode
	buf     bytes.Buffer
	sink    streamSink
	wantSSE bool
	// client is the real writer, reached by http.ResponseController.
	client http.ResponseWriter
	// sinkErr is the error that ended a stream's writes: the client went
	// away, or the upstream's stream broke (a *streamDefect).
	sinkErr error
	// idle, on a streamed attempt, cuts the upstream off when it stalls.
	idle *idleWatch
}

const captureLimit = 64 << 10

func newAttemptWriter(client http.ResponseWriter, wantSSE bool, sink streamSink) *attemptWriter {
	return &attemptWriter{header: make(http.Header), client: client, wantSSE: wantSSE, sink: sink}
}

// Header implements http.ResponseWriter: every attempt has its own map, so
// a failed attempt's headers never leak into the response.
func (w *attemptWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter.
func (w *attemptWriter) WriteHeader(status int) {
	if w.status != 0 || status < 200 {
		return
	}
	w.status = status
	switch {
	case retryable(status):
		w.mode = modeCapture
	case w.wantSSE && status == http.StatusOK && isEventStream(w.header.Get("Content-Type")):
		w.mode = modeStream
		if w.idle != nil {
			w.idle.start()
		}
	default:
		w.mode = modeBuffer
	}
}

func isEventStream(ct string) bool {
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// Write implements http.ResponseWriter.
func (w *attemptWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	switch w.mode {
	case modeCapture:
		if room := captureLimit - w.buf.Len(); room > 0 {
			w.buf.Write(p[:min(len(p), room)])
		}
	case modeBuffer:
		w.buf.Write(p)
	case modeStream:
		if w.idle != nil {
			w.idle.touch()
		}
		if err := w.sink.write(p); err != nil {
			w.sinkErr = err
			return 0, err
		}
	}
	return len(p), nil
}

// FlushError passes the proxy's flushes through to the client while
// streaming, so every event leaves as soon as it arrives.
func (w *attemptWriter) FlushError() error {
	if w.mode != modeStream {
		return nil
	}
	if err := w.sink.flush(); err != nil {
		w.sinkErr = err
		return err
	}
	return nil
}

// Flush implements http.Flusher.
func (w *attemptWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the client's writer.
func (w *attemptWriter) Unwrap() http.ResponseWriter { return w.client }
