package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/modelgate/gateway/translate"
)

// apiError is an error answered in the SPEC body
// {error:{message,type,code,param}}.
type apiError struct {
	status  int
	typ     string
	code    string
	param   string
	message string
	// extra is raw JSON members added at the top level (e.g. failed_gates).
	extra []byte
	// retryAfter, when set, is sent as the Retry-After header.
	retryAfter string
}

func (e *apiError) Error() string { return e.message }

func errInvalid(param, message string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_value", param: param, message: message}
}

func errValidation(v *translate.ValidationError) *apiError {
	e := errInvalid(v.Param, v.Error())
	if v.Code != "" {
		e.code = v.Code
	}
	return e
}

func errUnauthorized(message string) *apiError {
	return &apiError{status: http.StatusUnauthorized, typ: "authentication_error", code: "invalid_api_key", message: message}
}

func errForbidden(message string) *apiError {
	return &apiError{status: http.StatusForbidden, typ: "permission_error", code: "forbidden", message: message}
}

func errNotFound(message string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: "not_found_error", code: "not_found", message: message}
}

func errInternal(message string) *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: "api_error", code: "internal_error", message: message}
}

// appendBody writes the error body. Anthropic-shaped clients also get the
// top-level "type":"error" their SDKs look for.
func (e *apiError) appendBody(dst []byte, anthropic bool) []byte {
	dst = append(dst, '{')
	if anthropic {
		dst = append(dst, `"type":"error",`...)
	}
	dst = append(dst, `"error":{"message":`...)
	dst = translate.AppendJSONString(dst, e.message)
	dst = append(dst, `,"type":`...)
	dst = translate.AppendJSONString(dst, e.typ)
	dst = append(dst, `,"code":`...)
	if e.code == "" {
		dst = append(dst, "null"...)
	} else {
		dst = translate.AppendJSONString(dst, e.code)
	}
	dst = append(dst, `,"param":`...)
	if e.param == "" {
		dst = append(dst, "null"...)
	} else {
		dst = translate.AppendJSONString(dst, e.param)
	}
	dst = append(dst, '}')
	if len(e.extra) > 0 {
		dst = append(dst, ',')
		dst = append(dst, e.extra...)
	}
	return append(dst, '}')
}

// writeError answers with the error in the SPEC body.
func writeError(w http.ResponseWriter, e *apiError, anthropic bool) {
	body := e.appendBody(make([]byte, 0, 160), anthropic)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if e.retryAfter != "" {
		h.Set("Retry-After", e.retryAfter)
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}
