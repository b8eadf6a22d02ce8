package translate

// The gateway speaks of how a completion ended in the chat-completions
// vocabulary (stop, length, tool_calls, content_filter, function_call); these
// functions move between it and the other dialects' stop reasons and
// response statuses.

// chatFinishFromAnthropic maps a messages-shape stop_reason. end_turn,
// stop_sequence and pause_turn all end the turn normally; a refusal is the
// counterpart of a content filter.
func chatFinishFromAnthropic(stopReason string) string {
	switch stopReason {
	case "end_turn", "stop_sequence", "pause_turn":
		return "stop"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return ""
}

// anthropicStopFromChat maps a finish reason to a messages-shape stop_reason.
// The contract's stop_reason has no value for a content filter, so a filtered
// completion ends as end_turn; an unknown reason too.
func anthropicStopFromChat(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	}
	return "end_turn"
}

// chatFinishFromResponses maps a responses-shape status. A completed response
// that called a function finished with tool_calls; an incomplete one ran out
// of tokens unless it was filtered.
func chatFinishFromResponses(status, incompleteReason string, calledTools bool) string {
	switch status {
	case "completed":
		if calledTools {
			return "tool_calls"
		}
		return "stop"
	case "incomplete":
		if incompleteReason == "content_filter" {
			return "content_filter"
		}
		return "length"
	case "failed", "cancelled":
		return "stop"
	}
	return ""
}

// responsesStatusFromChat maps a finish reason to a responses-shape status
// and, for an incomplete response, the reason it is incomplete.
func responsesStatusFromChat(finish string) (status, incompleteReason string) {
	switch finish {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}
