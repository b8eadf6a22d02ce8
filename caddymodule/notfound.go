package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// passOn hands a request the gateway does not serve to the next handler.
// When nothing after the gateway answers it, Caddy would send an empty
// 200, which an SDK reads as an empty success; the gateway answers a JSON
// 404 instead, saying where the API is.
func (g *Gateway) passOn(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	aw := &answerWatch{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	err := next.ServeHTTP(aw, r)
	if err != nil || aw.answered {
		return err
	}
	writeError(w, g.unknownEndpoint(r), isMessagesPath(r.URL.Path))
	return nil
}

// maxPathInMessage bounds how much of a request path an error repeats.
const maxPathInMessage = 200

// unknownEndpoint is the 404 for a request no handler answered. Its message
// says how each kind of client reaches the API, since the usual cause is a
// base URL without the version segment (OpenAI clients) or with it
// (Anthropic clients, which add /v1 themselves).
func (g *Gateway) unknownEndpoint(r *http.Request) *apiError {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	origin := scheme + "://" + r.Host
	path := r.URL.Path
	if len(path) > maxPathInMessage {
		path = path[:maxPathInMessage] + "..."
	}
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "unknown_endpoint",
		message: fmt.Sprintf("no endpoint at %s %s. The API is under %s: OpenAI clients need a base URL that ends in %s (%s%s); "+
			"Anthropic clients take the address without it (%s).", r.Method, path, g.Prefix, g.Prefix, origin, g.Prefix, origin)}
}

// isMessagesPath reports whether path is one an Anthropic client calls,
// which reads errors in its own shape.
func isMessagesPath(path string) bool {
	return strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/messages/count_tokens")
}

// answerWatch notes whether the handlers after the gateway wrote a
// response. Everything else passes through to the client's writer, which
// http.ResponseController reaches through Unwrap (flushes, hijacking for
// upgrades, deadlines).
type answerWatch struct {
	*caddyhttp.ResponseWriterWrapper
	answered bool
}

// WriteHeader implements http.ResponseWriter.
func (w *answerWatch) WriteHeader(status int) {
	w.answered = true
	w.ResponseWriterWrapper.WriteHeader(status)
}

// Write implements http.ResponseWriter.
func (w *answerWatch) Write(p []byte) (int, error) {
	w.answered = true
	return w.ResponseWriterWrapper.Write(p)
}

// ReadFrom implements io.ReaderFrom, which the wrapper would otherwise
// pass to the client's writer unseen.
func (w *answerWatch) ReadFrom(r io.Reader) (int64, error) {
	w.answered = true
	return w.ResponseWriterWrapper.ReadFrom(r)
}
