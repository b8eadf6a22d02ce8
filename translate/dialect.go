package translate

// Dialect is a wire shape, spoken by a client or by an upstream.
type Dialect uint8

const (
	// Chat is the OpenAI chat-completions shape (POST /chat/completions).
	Chat Dialect = iota + 1
	// Messages is the Anthropic messages shape (POST /messages).
	Messages
	// Responses is the OpenAI responses shape (POST /responses).
	Responses
	// Embeddings is the OpenAI embeddings shape (POST /embeddings).
	Embeddings
)

// String returns the dialect's configuration name.
func (d Dialect) String() string {
	switch d {
	case Chat:
		return "chat"
	case Messages:
		return "messages"
	case Responses:
		return "responses"
	case Embeddings:
		return "embeddings"
	}
	return "unknown"
}

// Path is the endpoint path of the dialect, relative to a base URL that ends
// in the version segment.
func (d Dialect) Path() string {
	switch d {
	case Chat:
		return "/chat/completions"
	case Messages:
		return "/messages"
	case Responses:
		return "/responses"
	case Embeddings:
		return "/embeddings"
	}
	return ""
}
