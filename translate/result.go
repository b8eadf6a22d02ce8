package translate

// Usage is the token accounting of one call as the upstream reported it.
// Known is false when the upstream sent no usage, in which case the gateway
// reports cost as null rather than guessing.
type Usage struct {
	// InputTokens counts every input token, the cache classes below
	// included (as OpenAI's prompt_tokens does).
	InputTokens int
	// OutputTokens counts the output tokens.
	OutputTokens int
	// CacheReadTokens are the input tokens read from the provider's prompt
	// cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens).
	CacheReadTokens int
	// CacheWriteTokens are the input tokens written to the prompt cache
	// for its default duration (Anthropic cache_creation_input_tokens, 5
	// minutes).
	CacheWriteTokens int
	// CacheWrite1hTokens are the input tokens written to a one-hour prompt
	// cache (Anthropic cache_creation.ephemeral_1h_input_tokens).
	CacheWrite1hTokens int
	// Known is false when the upstream reported no usage.
	Known bool
}

// CacheClasses returns the cache classes of the input, each clamped so that
// together they never exceed InputTokens, whatever an upstream reported.
func (u Usage) CacheClasses() (read, write, write1h int) {
	left := max(u.InputTokens, 0)
	read = min(max(u.CacheReadTokens, 0), left)
	left -= read
	write = min(max(u.CacheWriteTokens, 0), left)
	left -= write
	write1h = min(max(u.CacheWrite1hTokens, 0), left)
	return read, write, write1h
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
