package translate

import "github.com/tidwall/gjson"

// ReadEmbeddingsUsage reads the token usage of an embeddings response.
// Embeddings have input tokens only.
func ReadEmbeddingsUsage(body []byte) Usage {
	u := gjson.GetBytes(body, "usage")
	in := u.Get("prompt_tokens")
	if !in.Exists() {
		in = u.Get("total_tokens")
	}
	return Usage{InputTokens: int(in.Int()), Known: in.Exists()}
}
