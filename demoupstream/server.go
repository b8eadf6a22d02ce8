package demoupstream

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Config configures a demo model server.
type Config struct {
	// Strict rejects unknown top-level request fields as the real APIs do.
	Strict bool
	// APIKey, when set, is required: OpenAI paths check "Authorization: Bearer <key>", Anthropic paths check "x-api-key".
	APIKey string
	// FailStatus, when non-zero, makes every model call answer with this HTTP status and the dialect's error body (used to test fallback).
	FailStatus int
	// Latency is added before every response's headers.
	Latency time.Duration
}

// New returns the server as an http.Handler.
func New(cfg Config) http.Handler {
	return &server{cfg: cfg}
}

// server is the handler New returns. It holds no state besides its
// configuration, so one value serves any number of concurrent requests.
type server struct {
	cfg Config
}

// maxBodyBytes bounds a request body; the real APIs refuse larger bodies
// with 413 as well.
const maxBodyBytes = 32 << 20

// ServeHTTP routes by path suffix so that the server answers under any
// prefix a provider's base URL may carry ("/v1", "/openai/v1", ...).
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-request-id", newRequestID())
	if s.cfg.Latency > 0 && !pause(r.Context(), s.cfg.Latency) {
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		s.modelCall(w, r, dialectOpenAI, s.chatCompletions)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		s.modelCall(w, r, dialectOpenAI, s.responses)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/embeddings"):
		s.modelCall(w, r, dialectOpenAI, s.embeddings)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		s.modelCall(w, r, dialectAnthropic, s.messages)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		s.modelCall(w, r, dialectAnthropic, s.countTokens)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		if s.authorize(w, r, dialectOpenAI) {
			writeJSON(w, r, http.StatusOK, modelList)
		}
	default:
		// The OpenAI API's answer to any path or method it does not serve.
		writeError(w, r, dialectOpenAI, &apiError{
			status:  http.StatusNotFound,
			message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, path),
		})
	}
}

// modelCall runs the steps every model call shares, in the order the real
// APIs apply them, then hands the body to the endpoint's handler.
func (s *server) modelCall(w http.ResponseWriter, r *http.Request, d dialect, handle func(http.ResponseWriter, *http.Request, string)) {
	if d == dialectAnthropic {
		// Anthropic names its request id header "request-id".
		w.Header().Set("request-id", w.Header().Get("x-request-id"))
	}
	if !s.authorize(w, r, d) {
		return
	}
	if d == dialectAnthropic && r.Header.Get("anthropic-version") == "" {
		writeError(w, r, d, invalid("", "", "anthropic-version: header is required"))
		return
	}
	// The body is read even when the call is bound to fail, so that the
	// connection stays reusable under load.
	body, e := readBody(w, r)
	if e != nil {
		writeError(w, r, d, e)
		return
	}
	if s.cfg.FailStatus != 0 {
		writeError(w, r, d, statusError(d, errorStatus(s.cfg.FailStatus)))
		return
	}
	handle(w, r, body)
}

// errorStatus keeps a forced status within the error range: anything else
// would make an error body arrive with a success status, or crash net/http.
func errorStatus(status int) int {
	if status < 400 || status > 599 {
		return http.StatusInternalServerError
	}
	return status
}

// authorize checks the API key the way the dialect carries it and answers
// 401 when it is missing or wrong.
func (s *server) authorize(w http.ResponseWriter, r *http.Request, d dialect) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	e := &apiError{status: http.StatusUnauthorized}
	if d == dialectAnthropic {
		key := r.Header.Get("x-api-key")
		switch {
		case key == "":
			e.message = "x-api-key header is required"
		case !sameKey(key, s.cfg.APIKey):
			e.message = "invalid x-api-key"
		default:
			return true
		}
		writeError(w, r, d, e)
		return false
	}
	header := r.Header.Get("Authorization")
	scheme, key, _ := strings.Cut(header, " ")
	switch {
	case header == "":
		e.message = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	case !strings.EqualFold(scheme, "Bearer") || !sameKey(strings.TrimSpace(key), s.cfg.APIKey):
		e.message = "Incorrect API key provided: " + redactKey(strings.TrimSpace(key)) + "."
		e.code = "invalid_api_key"
	default:
		return true
	}
	writeError(w, r, d, e)
	return false
}

// sameKey compares keys in constant time, as a key check should.
func sameKey(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// redactKey shows only the ends of a rejected key, as OpenAI does, so that
// the error can be matched to a key without the key leaking into logs.
func redactKey(key string) string {
	if len(key) < 12 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

// readBody reads the request body under maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) (string, *apiError) {
	var buf []byte
	if n := r.ContentLength; n > 0 && n <= maxBodyBytes {
		// One spare byte lets the final read see EOF without growing.
		buf = make([]byte, 0, n+1)
	} else {
		buf = make([]byte, 0, 512)
	}
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return string(buf), nil
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return "", &apiError{status: http.StatusRequestEntityTooLarge, message: "Request exceeds the maximum allowed number of bytes."}
			}
			return "", invalid("", "", "could not read the request body: %v", err)
		}
	}
}

// hold applies the directives that act before the response headers: first
// the sleep, then the forced status. It reports whether the handler should
// go on to answer.
func hold(w http.ResponseWriter, r *http.Request, d dialect, rep *reply) bool {
	if rep.sleep > 0 && !pause(r.Context(), rep.sleep) {
		return false
	}
	if rep.status >= 400 && rep.status <= 599 {
		writeError(w, r, d, statusError(d, rep.status))
		return false
	}
	return true
}

// pause waits for d, or until the client goes away, which it reports as false.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Interface guard.
var _ http.Handler = (*server)(nil)
