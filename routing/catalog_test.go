package routing

import (
	"math"
	"strings"
	"testing"

	"github.com/modelgate/gateway/translate"
)

func TestNewCatalogRejects(t *testing.T) {
	provs := func() []*Provider { return []*Provider{{Name: "a", Dialect: DialectOpenAI}} }
	path := func(edit func(*Path)) []Path {
		p := Path{Provider: "a", UpstreamModel: "m", Quantization: "full", ServedBy: "provider", Tiers: Tiers}
		edit(&p)
		return []Path{p}
	}
	keep := func(*Path) {}
	cases := []struct {
		name   string
		provs  []*Provider
		models []*Model
		want   string
	}{
		{"provider with a slash", []*Provider{{Name: "a/b", Dialect: DialectOpenAI}}, nil, "contain no '/'"},
		{"provider twice", append(provs(), provs()...), nil, "declared twice"},
		{"unknown dialect", []*Provider{{Name: "a", Dialect: "grpc"}}, nil, "unknown dialect"},
		{"model id without provider", provs(), []*Model{{ID: "m", Paths: path(keep)}}, "<provider>/<model>"},
		{"model twice", provs(), []*Model{{ID: "a/m", Paths: path(keep)}, {ID: "a/m", Paths: path(keep)}}, "declared twice"},
		{"no path", provs(), []*Model{{ID: "a/m"}}, "no path"},
		{"unknown provider", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.Provider = "b" })}}, "unknown provider"},
		{"quantization", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.Quantization = "q2" })}}, "quantization"},
		{"served_by", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.ServedBy = "cloud" })}}, "served_by"},
		{"partner path of a closed model", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.ServedBy = "router_network" })}}, "open-weight"},
		{"tier", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.Tiers = []string{"express"} })}}, "unknown tier"},
		{"negative price", provs(), []*Model{{ID: "a/m", Price: Price{Input: -1}, Paths: path(keep)}}, "price"},
		{"infinite cost", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.Cost.Output = math.Inf(1) })}}, "cost"},
		{"NaN cost", provs(), []*Model{{ID: "a/m", Paths: path(func(p *Path) { p.Cost.Input = math.NaN() })}}, "cost"},
	}
	for _, tc := range cases {
		if _, err := NewCatalog(tc.provs, tc.models, nil, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestNewCatalogDisabled(t *testing.T) {
	provs := []*Provider{{Name: "a", Dialect: DialectOpenAI}, {Name: "b", Dialect: DialectAnthropic}}
	models := []*Model{
		{ID: "a/m", Paths: []Path{
			{Provider: "b", UpstreamModel: "m", Quantization: "full", ServedBy: "provider", Tiers: Tiers},
			{Provider: "a", UpstreamModel: "m", Quantization: "full", ServedBy: "provider", Tiers: Tiers},
		}},
		{ID: "b/only", Paths: []Path{{Provider: "b", UpstreamModel: "only", Quantization: "full", ServedBy: "provider", Tiers: Tiers}}},
	}
	c, err := NewCatalog(provs, models, map[string]bool{"b": true}, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models()) != 1 || c.Created != 42 {
		t.Fatalf("%d models listed", len(c.Models()))
	}
	r, err := c.Select("a/m", Constraints{Dialect: translate.Chat, Tier: "realtime"})
	if err != nil || len(r.Candidates) != 1 || r.Candidates[0].Provider.Name != "a" {
		t.Errorf("switched-off provider still routed: %v %v", keys(r), err)
	}
	if err := c.AddRouter(RouterConfig{ID: "router-1", Reference: "b/only"}); err == nil {
		t.Error("router on a switched-off model accepted")
	}
}
