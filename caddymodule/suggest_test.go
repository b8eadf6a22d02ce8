package caddymodule

import (
	"slices"
	"strings"
	"testing"
)

func TestClosestModelIDs(t *testing.T) {
	models := []string{"demo/demo-chat", "demo/demo-embed", "openai/gpt-4o-mini", "openai/gpt-4o", "router-1", "router-embed-1"}
	for _, c := range []struct {
		id   string
		want []string
	}{
		{"gpt-4o-mini", []string{"openai/gpt-4o-mini", "openai/gpt-4o"}},
		{"router1", []string{"router-1"}},
		{"demo/demo-caht", []string{"demo/demo-chat"}},
		{"Demo/Demo-Chat", []string{"demo/demo-chat"}},
		{"anthropic/gpt-4o", []string{"openai/gpt-4o"}},
	} {
		got := closestModelIDs(c.id, models, 3)
		if len(got) == 0 || !slices.Equal(got[:min(len(got), len(c.want))], c.want) {
			t.Errorf("closest to %q: %v, want %v first", c.id, got, c.want)
		}
		if len(got) > 3 {
			t.Errorf("closest to %q: %d ids, want at most 3", c.id, len(got))
		}
	}
	if got := closestModelIDs("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", models, 3); len(got) != 0 {
		t.Errorf("unrelated id: suggested %v", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"router-1", "router1", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestOffModelReasonsNameTheVariable: a configured model whose provider
// has no credential is explained by the variable to set, and so is a
// router standing in for it.
func TestOffModelReasonsNameTheVariable(t *testing.T) {
	t.Setenv("MG_TEST_UNSET_KEY", "")
	provs := []ProviderConfig{
		{Name: "demo", Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1"},
		{Name: "openai", Dialect: "openai", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "MG_TEST_UNSET_KEY"},
	}
	models := []ModelConfig{
		{ID: "demo/demo-chat", InputPrice: 1, OutputPrice: 1},
		{ID: "openai/gpt-4o-mini", InputPrice: 1, OutputPrice: 1},
	}
	routers := []RouterConfig{{ID: "router-x", Reference: "openai/gpt-4o-mini"}}
	cat, _, err := buildCatalog(provs, models, routers, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := offModelReasons(provs, models, routers, cat)
	if _, ok := got["demo/demo-chat"]; ok {
		t.Errorf("an enabled model is explained as off: %v", got)
	}
	for _, id := range []string{"openai/gpt-4o-mini", "router-x"} {
		if why := got[id]; !containsAll(why, "MG_TEST_UNSET_KEY", `"openai"`) {
			t.Errorf("%s: reason %q does not name the provider and the variable", id, why)
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
