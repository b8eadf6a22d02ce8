package translate

import "fmt"

// ValidationError is a client request that breaks the contract. It becomes a
// 400 response with type invalid_request_error and the offending param.
type ValidationError struct {
	// Param is the path of the offending field, e.g. "messages[0].role".
	Param string
	// Message says what is wrong, for a person.
	Message string
	// Code is an optional machine-readable code (e.g. "tier_unavailable").
	Code string
}

func (e *ValidationError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return fmt.Sprintf("%s: %s", e.Param, e.Message)
}

// invalid builds a ValidationError with a formatted message.
func invalid(param, format string, args ...any) *ValidationError {
	return &ValidationError{Param: param, Message: fmt.Sprintf(format, args...)}
}
