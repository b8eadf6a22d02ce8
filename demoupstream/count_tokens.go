package demoupstream

import (
	"net/http"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// countTokens serves POST .../messages/count_tokens, the Anthropic token
// count: the request is a messages request without max_tokens, and the
// answer is {"input_tokens": N}, N being the input_tokens a messages call
// with the same body reports.
func (s *server) countTokens(w http.ResponseWriter, r *http.Request, body string) {
	if gjson.Get(body, "max_tokens").Exists() {
		writeError(w, r, dialectAnthropic, invalid("max_tokens", "", "max_tokens: Extra inputs are not permitted"))
		return
	}
	if gjson.Valid(body) && gjson.Parse(body).IsObject() {
		// The messages rules require max_tokens, which counting has none of.
		if withMax, err := sjson.Set(body, "max_tokens", 1); err == nil {
			body = withMax
		}
	}
	t, e := readMessages(body, s.cfg.Strict)
	if e != nil {
		writeError(w, r, dialectAnthropic, e)
		return
	}
	out := append([]byte(`{"input_tokens":`), appendInt(nil, t.inputWords)...)
	writeJSON(w, r, http.StatusOK, append(out, '}'))
}
