package reliability

import (
	"errors"
	"fmt"
	"net/http"
)

// Error types of the API's error body (SPEC section 7).
const (
	// ErrorTypeInvalidRequest is a request that breaks the contract.
	ErrorTypeInvalidRequest = "invalid_request_error"
	// ErrorTypeNotFound is an id no record has.
	ErrorTypeNotFound = "not_found_error"
	// ErrorTypePermission is a record of another org.
	ErrorTypePermission = "permission_error"
	// ErrorTypeAPI is a failure of the gateway itself.
	ErrorTypeAPI = "api_error"
	// ErrorTypeShipGatesUnmet is a promotion its ship gates refused.
	ErrorTypeShipGatesUnmet = "ship_gates_unmet"
)

// apiError is an error answered in the SPEC body
// {"error":{"message","type","code","param"}}.
type apiError struct {
	status  int
	typ     string
	code    string
	param   string
	message string
	// failedGates is the top-level failed_gates of ship_gates_unmet.
	failedGates []FailedGate
}

// errorBody is the JSON of an apiError.
type errorBody struct {
	// Error is the SPEC's error object.
	Error errorDetail `json:"error"`
	// FailedGates is only sent with ship_gates_unmet.
	FailedGates []FailedGate `json:"failed_gates,omitempty"`
}

// errorDetail is the "error" member of the body.
type errorDetail struct {
	// Message says what went wrong, for a person.
	Message string `json:"message"`
	// Type is one of the ErrorType constants.
	Type string `json:"type"`
	// Code names the rule or condition, for a program.
	Code string `json:"code"`
	// Param is the offending field, or null.
	Param *string `json:"param"`
}

// body is the error's JSON value.
func (e *apiError) body() errorBody {
	b := errorBody{Error: errorDetail{Message: e.message, Type: e.typ, Code: e.code}, FailedGates: e.failedGates}
	if e.param != "" {
		b.Error.Param = &e.param
	}
	return b
}

// errBadRequest is a 400 from a validation error.
func errBadRequest(v *ValidationError) *apiError {
	code := v.Code
	if code == "" {
		code = CodeInvalidValue
	}
	msg := v.Message
	if v.Param != "" {
		msg = v.Param + ": " + msg
	}
	return &apiError{status: http.StatusBadRequest, typ: ErrorTypeInvalidRequest, code: code, param: v.Param, message: msg}
}

// errNotFound is a 404 naming the param that held the unknown id.
func errNotFound(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, typ: ErrorTypeNotFound, code: "not_found", param: param, message: fmt.Sprintf(format, args...)}
}

// errForbidden is a 403 naming the param that held another org's id.
func errForbidden(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusForbidden, typ: ErrorTypePermission, code: "forbidden", param: param, message: fmt.Sprintf(format, args...)}
}

// errMethod is a 405 for a path served with other methods.
func errMethod(method string) *apiError {
	return &apiError{status: http.StatusMethodNotAllowed, typ: ErrorTypeInvalidRequest, code: "method_not_allowed",
		message: fmt.Sprintf("method %s is not allowed here", method)}
}

// errShipGates is the 400 of a promotion refused by its gates.
func errShipGates(e *ShipGatesUnmetError) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: ErrorTypeShipGatesUnmet, code: CodeShipGatesUnmet,
		message: e.Error(), failedGates: e.FailedGates}
}

// internal logs a failure of the gateway and answers a 500 that does not
// leak its details.
func (a *API) internal(what string, err error) *apiError {
	a.log(what, err)
	return &apiError{status: http.StatusInternalServerError, typ: ErrorTypeAPI, code: "internal_error", message: what + " failed"}
}

// fromStore answers a store error: its validation errors as 400s, unknown
// and foreign ids as 404 and 403 naming param, anything else as a 500.
// kind and id say what was looked up, for the message.
func (a *API) fromStore(err error, what, param, kind, id string) *apiError {
	var verr *ValidationError
	var gates *ShipGatesUnmetError
	switch {
	case errors.As(err, &gates):
		return errShipGates(gates)
	case errors.As(err, &verr):
		return errBadRequest(verr)
	case errors.Is(err, ErrNotFound):
		return errNotFound(param, "no %s with id %q", kind, id)
	case errors.Is(err, ErrForbidden):
		return errForbidden(param, "%s %s belongs to another organisation", kind, id)
	case errors.Is(err, ErrBadCursor):
		return errBadRequest(invalid("cursor", "is not a cursor this API returned"))
	case errors.Is(err, ErrBadLimit):
		return errBadRequest(invalid("limit", "must be an integer from 1 to %d", MaxPageLimit))
	}
	return a.internal(what, err)
}
