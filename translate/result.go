package translate

// Usage is the token accounting of one call as the upstream reported it.
// Known is false when the upstream sent no usage, in which case the gateway
// reports cost as null rather than guessing.
type Usage struct {
	InputTokens  int
	OutputTokens int
	Known        bool
}

// ToolCall is one tool invocation produced by the assistant. Arguments is the
// JSON text of the arguments object.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Result is what the assistant produced, independent of the wire shape that
// carried it: the exchange fingerprint, the call record and the evaluators
// read it.
type Result struct {
	// Text is the concatenated assistant text.
	Text string
	// ToolCalls are the tool invocations in order.
	ToolCalls []ToolCall
	// FinishReason is in the chat-completions vocabulary: stop, length,
	// tool_calls, content_filter or function_call; empty when unknown.
	FinishReason string
}

// Empty reports whether the assistant produced no content at all.
func (r *Result) Empty() bool { return r.Text == "" && len(r.ToolCalls) == 0 }
