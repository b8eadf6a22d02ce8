package demoupstream

import (
	"fmt"
	"net/http"
)

// dialect is the wire family a path belongs to; it decides the error body.
type dialect uint8

const (
	dialectOpenAI dialect = iota
	dialectAnthropic
)

// apiError is a failure to report to the client in the dialect's error body.
// The error type is derived from the status and dialect when it is written,
// so readers only say what went wrong and where.
type apiError struct {
	status  int
	message string
	// param names the offending field for the OpenAI body; empty writes null.
	param string
	// code is OpenAI's machine-readable code; empty writes null.
	code string
}

func (e *apiError) Error() string { return e.message }

// invalid returns a 400 naming param, as both dialects report a bad request.
func invalid(param, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, param: param, code: code, message: fmt.Sprintf(format, args...)}
}

// openAIErrorType returns the error.type the OpenAI API uses for status.
// OpenAI reports most client errors as invalid_request_error and rate
// limits by the kind of limit hit ("requests" for a request-rate limit).
func openAIErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// anthropicErrorType returns the error.type the Anthropic API uses for status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// statusError is the error a forced status (Config.FailStatus or the
// [[status:NNN]] directive) answers with: the message and code the real API
// sends for that status, so that clients and the gateway classify it as
// they would the real failure.
func statusError(d dialect, status int) *apiError {
	e := &apiError{status: status}
	if d == dialectAnthropic {
		switch status {
		case http.StatusUnauthorized:
			e.message = "invalid x-api-key"
		case http.StatusForbidden:
			e.message = "Your API key does not have permission to use the specified resource."
		case http.StatusNotFound:
			e.message = "The requested resource could not be found."
		case http.StatusRequestEntityTooLarge:
			e.message = "Request exceeds the maximum allowed number of bytes."
		case http.StatusTooManyRequests:
			e.message = "Number of requests has exceeded your per-minute rate limit. Please reduce the prompt length or the maximum tokens requested, or try again later."
		case http.StatusServiceUnavailable, 529:
			e.message = "Overloaded"
		case http.StatusGatewayTimeout:
			e.message = "Request timed out."
		default:
			if status >= 500 {
				e.message = "Internal server error"
			} else {
				e.message = fmt.Sprintf("Request failed with status %d.", status)
			}
		}
		return e
	}
	switch status {
	case http.StatusUnauthorized:
		e.message, e.code = "Incorrect API key provided.", "invalid_api_key"
	case http.StatusForbidden:
		e.message, e.code = "You are not allowed to sample from this model.", "permission_denied"
	case http.StatusNotFound:
		e.message, e.code = "The model does not exist or you do not have access to it.", "model_not_found"
	case http.StatusTooManyRequests:
		e.message, e.code = "Rate limit reached for requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s.", "rate_limit_exceeded"
	case http.StatusServiceUnavailable:
		e.message = "The server is overloaded or not ready yet."
	default:
		if status >= 500 {
			e.message = "The server had an error while processing your request. Sorry about that!"
		} else {
			e.message = fmt.Sprintf("Request failed with status %d.", status)
		}
	}
	return e
}

// appendErrorBody appends the dialect's error body for e.
//
//	OpenAI:    {"error":{"message":...,"type":...,"param":null,"code":null}}
//	Anthropic: {"type":"error","error":{"type":...,"message":...},"request_id":...}
func appendErrorBody(b []byte, d dialect, e *apiError, requestID string) []byte {
	if d == dialectAnthropic {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = appendString(b, anthropicErrorType(e.status))
		b = append(b, `,"message":`...)
		b = appendString(b, e.message)
		b = append(b, `},"request_id":`...)
		b = appendString(b, requestID)
		return append(b, '}')
	}
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, e.message)
	b = append(b, `,"type":`...)
	b = appendString(b, openAIErrorType(e.status))
	b = append(b, `,"param":`...)
	b = appendStringOrNull(b, e.param)
	b = append(b, `,"code":`...)
	b = appendStringOrNull(b, e.code)
	return append(b, `}}`...)
}

func appendStringOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// writeError answers the request with e in the dialect's error body.
func writeError(w http.ResponseWriter, r *http.Request, d dialect, e *apiError) {
	bp := getBuffer()
	defer putBuffer(bp)
	*bp = appendErrorBody((*bp)[:0], d, e, w.Header().Get("x-request-id"))
	writeJSON(w, r, e.status, *bp)
}
