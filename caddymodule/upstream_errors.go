package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// How an upstream's failure reaches the client. The client gets a message
// of the gateway's own, in its dialect's error shape and types, that names
// the kind of failure and never carries Go internals, provider credentials
// or provider account ids. The upstream's own text, scrubbed of
// credentials and account ids, is kept on the call record's attempts for
// the operator. An upstream's Retry-After rides along on 429, 503 and 529.

// statusOverloaded is Anthropic's 529: the API is overloaded.
const statusOverloaded = 529

// attemptFailure is what the last failed attempt of a call left.
type attemptFailure struct {
	// status is the upstream's status; 0 when none came back.
	status int
	// retryAfter is the upstream's Retry-After, checked.
	retryAfter string
	// err is the transport's error when no status came back.
	err error
	// upstreamType is the error type the upstream named, if any.
	upstreamType string
}

// failureOf describes a failed attempt.
func failureOf(status int, h http.Header, body []byte, err error) attemptFailure {
	f := attemptFailure{status: status, err: err}
	if status != 0 {
		f.retryAfter = cleanRetryAfter(h.Get("Retry-After"))
		f.upstreamType = gjson.GetBytes(body, "error.type").String()
	}
	return f
}

// cleanRetryAfter returns v when it is a Retry-After value (seconds or an
// HTTP date), else "".
func cleanRetryAfter(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 64 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ' || c == ',' || c == ':') {
			return ""
		}
	}
	if _, err := http.ParseTime(v); err != nil {
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return ""
			}
		}
	}
	return v
}

// unservedError is the client's error when no path could serve the call,
// from the last failure.
func unservedError(f attemptFailure, d translate.Dialect) *apiError {
	e := &apiError{status: http.StatusBadGateway, typ: "api_error", code: "upstream_unavailable",
		message: "no upstream provider could serve the call: the upstream could not be reached"}
	status := f.status
	if status == 0 && f.err != nil && isTimeout(f.err) {
		status = http.StatusGatewayTimeout
	}
	switch {
	case status == http.StatusTooManyRequests:
		e.status, e.typ, e.code = http.StatusTooManyRequests, "rate_limit_error", "upstream_rate_limited"
		e.message = "the upstream provider is rate limiting calls to this model; retry later"
	case status == statusOverloaded || f.upstreamType == "overloaded_error":
		e.message = "the upstream provider is overloaded; retry later"
		if d == translate.Messages {
			// Anthropic clients know this status and type, and retry it.
			e.status, e.typ, e.code = statusOverloaded, "overloaded_error", "overloaded"
		} else {
			e.status, e.typ, e.code = http.StatusServiceUnavailable, "api_error", "upstream_overloaded"
		}
	case status == http.StatusServiceUnavailable:
		e.status, e.code = http.StatusServiceUnavailable, "upstream_unavailable"
		e.message = "the upstream provider is unavailable; retry later"
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.code = "upstream_auth_failed"
		e.message = "the upstream provider refused the gateway's credentials for this model"
	case status == http.StatusNotFound:
		e.code = "upstream_model_not_found"
		e.message = "the upstream provider does not serve this model"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout || errors.Is(f.err, errStalled):
		e.status, e.code = http.StatusGatewayTimeout, "upstream_timeout"
		e.message = "the upstream provider did not answer in time"
	case status >= 500:
		e.code = "upstream_error"
		e.message = "the upstream provider failed to serve the call"
	case errors.Is(f.err, errAborted):
		e.code = "upstream_error"
		e.message = "the upstream provider's answer was cut off"
	case f.err != nil:
		var cc *errContentCoding
		if errors.As(f.err, &cc) {
			e.code = "upstream_invalid_response"
			e.message = "the upstream provider answered in an encoding the gateway cannot read"
		}
	}
	if e.status == http.StatusTooManyRequests || e.status == http.StatusServiceUnavailable || e.status == statusOverloaded {
		e.retryAfter = f.retryAfter
	}
	return e
}

// rejectedError maps an upstream's refusal of the request itself (a 4xx
// that another path would answer the same) to the client's error: the
// upstream's status, its message scrubbed of credentials and account ids
// (it is about the client's own request, such as a context too long), and
// its type, code and param when they are plain names.
func rejectedError(body []byte, status int, d translate.Dialect) *apiError {
	e := &apiError{status: status, typ: "invalid_request_error", code: "upstream_rejected",
		message: "the upstream provider rejected the request (" + http.StatusText(status) + ")"}
	if status == http.StatusRequestEntityTooLarge && d == translate.Messages {
		e.typ = "request_too_large"
	}
	eb := gjson.GetBytes(body, "error")
	if m := eb.Get("message").String(); m != "" {
		e.message = "the upstream provider rejected the request: " + cleanMessage(m)
	}
	if t := eb.Get("type").String(); knownErrorTypes[t] {
		e.typ = t
	}
	if cd := eb.Get("code"); cd.Type == gjson.String && plainName(cd.Str) {
		e.code = cd.Str
	}
	if p := eb.Get("param"); p.Type == gjson.String && len(p.Str) <= 256 {
		e.param = scrubText(p.Str)
	}
	return e
}

// knownErrorTypes are the error types of the OpenAI and Anthropic APIs an
// upstream's refusal may keep.
var knownErrorTypes = map[string]bool{
	"invalid_request_error": true, "authentication_error": true, "permission_error": true,
	"not_found_error": true, "request_too_large": true, "rate_limit_error": true,
	"api_error": true, "overloaded_error": true,
}

// plainName reports whether s is a short snake_case name.
func plainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// cleanMessage is an upstream's message fit for a client: scrubbed of
// credentials and account ids, on one line, and short.
func cleanMessage(m string) string {
	m = strings.Join(strings.Fields(scrubText(m)), " ")
	if len(m) > 500 {
		cut := 500
		for cut > 0 && m[cut]&0xc0 == 0x80 {
			cut--
		}
		m = m[:cut] + "..."
	}
	return m
}

// attemptErrorText is a transport error as the call record keeps it:
// without the wrapping of Caddy's handler errors (an error id, a Go file
// and line), and scrubbed.
func attemptErrorText(err error) string {
	var he caddyhttp.HandlerError
	if errors.As(err, &he) && he.Err != nil {
		err = he.Err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the upstream did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	}
	return scrubText(err.Error())
}

// isTimeout reports whether a transport error is a timeout.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errStalled) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var he caddyhttp.HandlerError
	return errors.As(err, &he) && he.StatusCode == http.StatusGatewayTimeout
}
