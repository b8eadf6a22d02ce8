package demoupstream

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

// TestCountTokensMatchesMessagesUsage: the count of a body is the
// input_tokens a messages call with the same body reports.
func TestCountTokensMatchesMessagesUsage(t *testing.T) {
	srv := serve(t, Config{Strict: true})
	body := `{"model":"demo-claude","system":"be brief","messages":[{"role":"user","content":"count these five words"}]}`
	got := call(t, srv, http.MethodPost, "/v1/messages/count_tokens", body, anthropicHeaders...)
	if got.status != http.StatusOK {
		t.Fatalf("status %d: %s", got.status, got.body)
	}
	n := gjson.Get(got.body, "input_tokens")
	if n.Type != gjson.Number || n.Int() <= 0 {
		t.Fatalf("no input_tokens: %s", got.body)
	}
	msg := call(t, srv, http.MethodPost, "/v1/messages",
		`{"model":"demo-claude","max_tokens":50,"system":"be brief","messages":[{"role":"user","content":"count these five words"}]}`,
		anthropicHeaders...)
	if want := gjson.Get(msg.body, "usage.input_tokens").Int(); n.Int() != want {
		t.Fatalf("count_tokens says %d, a messages call reports %d", n.Int(), want)
	}

	bad := call(t, srv, http.MethodPost, "/v1/messages/count_tokens", `{"model":"demo-claude","max_tokens":5,"messages":[]}`, anthropicHeaders...)
	if bad.status != http.StatusBadRequest {
		t.Fatalf("max_tokens accepted: %d %s", bad.status, bad.body)
	}
	noVersion := call(t, srv, http.MethodPost, "/v1/messages/count_tokens", body)
	if noVersion.status != http.StatusBadRequest {
		t.Fatalf("no anthropic-version accepted: %d", noVersion.status)
	}
}
