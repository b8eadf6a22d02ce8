package caddymodule

import (
	"testing"

	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// TestCacheKeyScope: the response cache key differs by org, by the org's
// model access, by endpoint and by any member of the body, known to the
// gateway or not; member order and whitespace do not count.
func TestCacheKeyScope(t *testing.T) {
	key := func(org string, allowed map[string]bool, d translate.Dialect, body string) string {
		c := &call{p: &principal{orgID: org, allowed: allowed}, d: d, body: []byte(body), route: routing.Route{Tier: "standard"}}
		return c.cacheKey()
	}
	base := `{"model":"demo/m","messages":[{"role":"user","content":"hi"}],"x_vendor":1}`
	k := key("org_a", nil, translate.Chat, base)
	for name, other := range map[string]string{
		"other org":          key("org_b", nil, translate.Chat, base),
		"limited access":     key("org_a", map[string]bool{"demo/m": true}, translate.Chat, base),
		"other endpoint":     key("org_a", nil, translate.Responses, base),
		"unknown member":     key("org_a", nil, translate.Chat, `{"model":"demo/m","messages":[{"role":"user","content":"hi"}],"x_vendor":2}`),
		"extra unknown":      key("org_a", nil, translate.Chat, `{"model":"demo/m","messages":[{"role":"user","content":"hi"}],"x_vendor":1,"y":null}`),
		"known, not in fp_c": key("org_a", nil, translate.Chat, `{"model":"demo/m","messages":[{"role":"user","content":"hi"}],"x_vendor":1,"user":"u"}`),
	} {
		if other == k {
			t.Errorf("%s: same cache key %s", name, k)
		}
	}
	same := key("org_a", nil, translate.Chat, ` {"x_vendor":1, "messages":[{"content":"hi","role":"user"}], "model":"demo/m"}`)
	if same != k {
		t.Errorf("member order and whitespace changed the key: %s vs %s", same, k)
	}
	hinted := key("org_a", nil, translate.Chat, `{"model":"demo/m","messages":[{"role":"user","content":"hi","cache_control":{"type":"ephemeral"}}],"x_vendor":1}`)
	if hinted != k {
		t.Errorf("a prompt-cache hint changed the key: %s vs %s", hinted, k)
	}
}
