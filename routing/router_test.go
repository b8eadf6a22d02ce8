package routing

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/gateway/translate"
)

// The routing catalog of the tests. Path costs (input+output per 1M):
//
//	meta/llama-70b (reference, open weight)
//	  together/llama-70b@full          3.6  all tiers
//	  router-net:partner_1 .. @full    2.0  standard, batch  (quality-preserving)
//	  router-net:partner_1 .. @q4      0.8  standard, batch
//	local/llama-8b        local/llama-8b@full     0.4  all tiers
//	openai/gpt-mini       openai/gpt-mini@full    0.75 all tiers
//	openai/gpt-huge       openai/gpt-huge@full    200  all tiers
const (
	keyRefFull     = "together/llama-70b@full"
	keyPartnerFull = "router-net:partner_1/llama-70b@full"
	keyPartnerQ4   = "router-net:partner_1/llama-70b@q4"
	keySmall       = "local/llama-8b@full"
	keyMini        = "openai/gpt-mini@full"
	keyHuge        = "openai/gpt-huge@full"
)

var (
	allTiers = []string{"realtime", "standard", "batch"}
	offPeak  = []string{"standard", "batch"}
)

func testCatalog(t testing.TB) *Catalog {
	t.Helper()
	providers := []*Provider{
		{Name: "together", Dialect: DialectOpenAIChat},
		{Name: "router-net:partner_1", Dialect: DialectOpenAIChat},
		{Name: "local", Dialect: DialectOpenAIChat},
		{Name: "openai", Dialect: DialectOpenAI},
	}
	models := []*Model{
		{ID: "meta/llama-70b", OwnedBy: "meta", OpenWeight: true, Price: Price{Input: 1, Output: 3}, Paths: []Path{
			{Provider: "together", UpstreamModel: "llama-70b", Quantization: "full", ServedBy: "provider", Tiers: allTiers, Cost: Price{Input: 0.9, Output: 2.7}},
			{Provider: "router-net:partner_1", UpstreamModel: "llama-70b", Quantization: "full", ServedBy: "router_network", Tiers: offPeak, Cost: Price{Input: 0.5, Output: 1.5}},
			{Provider: "router-net:partner_1", UpstreamModel: "llama-70b", Quantization: "q4", ServedBy: "router_network", Tiers: offPeak, Cost: Price{Input: 0.2, Output: 0.6}},
		}},
		{ID: "local/llama-8b", OpenWeight: true, Price: Price{Input: 0.2, Output: 0.6}, Paths: []Path{
			{Provider: "local", UpstreamModel: "llama-8b", Quantization: "full", ServedBy: "provider", Tiers: allTiers, Cost: Price{Input: 0.1, Output: 0.3}},
		}},
		{ID: "openai/gpt-mini", Price: Price{Input: 0.15, Output: 0.6}, Paths: []Path{
			{Provider: "openai", UpstreamModel: "gpt-mini", Quantization: "full", ServedBy: "provider", Tiers: allTiers, Cost: Price{Input: 0.15, Output: 0.6}},
		}},
		{ID: "openai/gpt-huge", Price: Price{Input: 50, Output: 150}, Paths: []Path{
			{Provider: "openai", UpstreamModel: "gpt-huge", Quantization: "full", ServedBy: "provider", Tiers: allTiers, Cost: Price{Input: 50, Output: 150}},
		}},
		{ID: "openai/embed-small", Embedding: true, Price: Price{Input: 0.02}, Paths: []Path{
			{Provider: "openai", UpstreamModel: "embed-small", Quantization: "full", ServedBy: "provider", Tiers: allTiers, Cost: Price{Input: 0.02}},
		}},
		{ID: "openai/gpt-now", Price: Price{Input: 2, Output: 8}, Paths: []Path{
			{Provider: "openai", UpstreamModel: "gpt-now", Quantization: "full", ServedBy: "provider", Tiers: []string{"realtime"}, Cost: Price{Input: 2, Output: 8}},
		}},
	}
	c, err := NewCatalog(providers, models, nil, 1700000000)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range []RouterConfig{
		{ID: "router-1", Reference: "meta/llama-70b", Pool: []string{"local/llama-8b", "openai/gpt-mini", "openai/gpt-huge", "meta/llama-70b"}},
		{ID: "router-now", Reference: "openai/gpt-now", Pool: []string{"local/llama-8b"}},
		{ID: "router-embed-1", Embedding: true, Reference: "openai/embed-small"},
	} {
		if err := c.AddRouter(rc); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// gatesOf is the operation of the routing tests: two evaluators.
var gatesOf = []Gate{{EvaluatorID: "evr_json", MinScore: 0.8}, {EvaluatorID: "evr_judge", MinScore: 0.7}}

// feed adds n results per gate for the path, each gate's scores spread
// ±0.02 around its min_score plus delta.
func feed(ev *Evidence, op, path string, n int, delta float64) {
	for i := range n {
		for _, g := range gatesOf {
			s := g.MinScore + delta + 0.02*float64(i%3-1)
			ev.Add(op, path, g.EvaluatorID, s, s >= g.MinScore)
		}
	}
}

func keys(r Route) []string {
	out := make([]string, len(r.Candidates))
	for i, c := range r.Candidates {
		out[i] = PathKey(c)
	}
	return out
}

// fixed returns an rnd that always draws v and counts its draws.
func fixed(v float64, draws *int) func() float64 {
	return func() float64 { *draws++; return v }
}

func TestSelectRouted(t *testing.T) {
	c := testCatalog(t)
	chat := translate.Chat
	gated := Gating{OperationID: "op_1", Gates: gatesOf, PromptFingerprint: "fp_p_a"}
	type evidenceFn func(ev *Evidence)
	cases := []struct {
		name     string
		router   string
		k        Constraints
		g        Gating
		evidence evidenceFn
		rnd      float64 // drawn value; 1 never explores
		want     []string
		model    string
		tier     string
		upgraded bool
		explored bool
		remember bool
		draws    int
	}{
		{name: "realtime takes the reference's full path", k: Constraints{Tier: "realtime"}, g: gated,
			evidence: func(ev *Evidence) { feed(ev, "op_1", keySmall, 50, 0.1) },
			want:     []string{keyRefFull}, model: "meta/llama-70b", tier: "realtime"},
		{name: "standard with no operation: only quality-preserving paths", k: Constraints{Tier: "standard"},
			evidence: func(ev *Evidence) { feed(ev, "op_1", keySmall, 50, 0.1) },
			want:     []string{keyPartnerFull, keyRefFull}, model: "meta/llama-70b", tier: "standard"},
		{name: "an operation with no gates has no evidence", k: Constraints{Tier: "standard"}, g: Gating{OperationID: "op_1"},
			evidence: func(ev *Evidence) { feed(ev, "op_1", keySmall, 50, 0.1) },
			want:     []string{keyPartnerFull, keyRefFull}, model: "meta/llama-70b", tier: "standard"},
		{name: "passing path below the sample minimum is not taken", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) { feed(ev, "op_1", keyPartnerQ4, 19, 0.1) },
			want:     []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "passing path with enough samples is taken", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) { feed(ev, "op_1", keyPartnerQ4, 20, 0.1) },
			want:     []string{keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "evidence of another operation does not count", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) { feed(ev, "op_2", keyPartnerQ4, 50, 0.1) },
			want:     []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "a mean above min_score with a lower bound below is not a pass", k: Constraints{Tier: "standard"}, g: gated, rnd: 1, draws: 1,
			evidence: func(ev *Evidence) {
				for i := range 40 {
					for _, g := range gatesOf {
						ev.Add("op_1", keyPartnerQ4, g.EvaluatorID, g.MinScore+0.01+0.3*float64(i%2*2-1), i%2 == 1)
					}
				}
			},
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b"},
		{name: "a failing path is never taken nor explored", k: Constraints{Tier: "standard"}, g: gated, rnd: 0,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyPartnerQ4, 30, -0.2)
				feed(ev, "op_1", keyMini, 30, -0.2)
				feed(ev, "op_1", keySmall, 30, -0.2)
			},
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b"},
		{name: "every passing cheaper path, cheapest first, then the reference's", k: Constraints{Tier: "batch"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) {
				for _, k := range []string{keyPartnerQ4, keySmall, keyMini, keyHuge} {
					feed(ev, "op_1", k, 30, 0.1)
				}
			},
			want: []string{keySmall, keyMini, keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "batch", model: "local/llama-8b"},
		{name: "exploration tries the next cheaper unproven path when rnd < explore", k: Constraints{Tier: "standard"}, g: gated, rnd: 0.0499,
			want: []string{keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", explored: true, draws: 1},
		{name: "no exploration when rnd = explore", k: Constraints{Tier: "standard"}, g: gated, rnd: 0.05,
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "exploration steps one rung below the chosen path", k: Constraints{Tier: "standard"}, g: gated, rnd: 0,
			evidence: func(ev *Evidence) { feed(ev, "op_1", keyPartnerQ4, 30, 0.1) },
			want:     []string{keyMini, keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "standard", model: "openai/gpt-mini", explored: true, draws: 1},
		{name: "nothing unproven below: no draw", k: Constraints{Tier: "standard"}, g: gated, rnd: 0,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyPartnerQ4, 30, 0.1)
				feed(ev, "op_1", keyMini, 30, -0.3)
				feed(ev, "op_1", keySmall, 30, 0.1)
			},
			want: []string{keySmall, keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "standard", model: "local/llama-8b"},
		{name: "calls with no gates never explore", k: Constraints{Tier: "standard"}, rnd: 0,
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b"},
		{name: "realtime never explores", k: Constraints{Tier: "realtime"}, g: gated, rnd: 0,
			want: []string{keyRefFull}, tier: "realtime", model: "meta/llama-70b"},
		{name: "remembered exchange path goes first and is not explored past", k: Constraints{Tier: "standard"}, g: gated, rnd: 0,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyPartnerQ4, 30, 0.1)
				ev.RememberExchange("fp_p_a", "op_1", keySmall)
			},
			want: []string{keySmall, keyPartnerQ4, keyPartnerFull, keyRefFull}, tier: "standard", model: "local/llama-8b", remember: true},
		{name: "remembered path already in the route moves to the front", k: Constraints{Tier: "standard"}, g: gated,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyPartnerQ4, 30, 0.1)
				feed(ev, "op_1", keySmall, 30, 0.1)
				ev.RememberExchange("fp_p_a", "op_1", keyPartnerQ4)
			},
			want: []string{keyPartnerQ4, keySmall, keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", remember: true},
		{name: "remembered path that has since failed is ignored", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keySmall, 30, -0.3)
				ev.RememberExchange("fp_p_a", "op_1", keySmall)
			},
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "remembered path dearer than the reference is ignored", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyHuge, 30, 0.1)
				ev.RememberExchange("fp_p_a", "op_1", keyHuge)
			},
			want: []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "another prompt's memory does not count", k: Constraints{Tier: "standard"}, g: gated, rnd: 1,
			evidence: func(ev *Evidence) { ev.RememberExchange("fp_p_b", "op_1", keySmall) },
			want:     []string{keyPartnerFull, keyRefFull}, tier: "standard", model: "meta/llama-70b", draws: 1},
		{name: "forbid_atlas_network removes partner paths", k: Constraints{Tier: "standard", ForbidPartner: true}, g: gated, rnd: 0,
			evidence: func(ev *Evidence) {
				feed(ev, "op_1", keyPartnerQ4, 30, 0.1)
				ev.RememberExchange("fp_p_a", "op_1", keyPartnerQ4)
			},
			want: []string{keyMini, keyRefFull}, tier: "standard", model: "openai/gpt-mini", explored: true, draws: 1},
		{name: "no open path at the tier: upgraded to realtime", router: "router-now", k: Constraints{Tier: "standard"},
			want: []string{"openai/gpt-now@full"}, tier: "realtime", upgraded: true, model: "openai/gpt-now"},
		{name: "a passing cheaper path keeps the tier", router: "router-now", k: Constraints{Tier: "batch", TierStrict: true}, g: gated,
			evidence: func(ev *Evidence) { feed(ev, "op_1", keySmall, 30, 0.1) },
			want:     []string{keySmall}, tier: "batch", model: "local/llama-8b"},
		{name: "exploring an upgraded call serves it at the requested tier", router: "router-now", k: Constraints{Tier: "standard"}, g: gated, rnd: 0,
			want: []string{keySmall, "openai/gpt-now@full"}, tier: "standard", model: "local/llama-8b", explored: true, draws: 1},
		{name: "embeddings router", router: "router-embed-1", k: Constraints{Dialect: translate.Embeddings, Tier: "standard"},
			want: []string{"openai/embed-small@full"}, tier: "standard", model: "openai/embed-small"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := &Evidence{}
			if tc.evidence != nil {
				tc.evidence(ev)
			}
			router := cmp.Or(tc.router, "router-1")
			if tc.k.Dialect == 0 {
				tc.k.Dialect = chat
			}
			draws := 0
			r, err := c.SelectRouted(router, tc.k, tc.g, ev, fixed(tc.rnd, &draws))
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(r); !slices.Equal(got, tc.want) {
				t.Errorf("candidates %v, want %v", got, tc.want)
			}
			if r.Model.ID != tc.model || r.Tier != tc.tier || r.Upgraded != tc.upgraded || r.Explored != tc.explored || r.Remembered != tc.remember {
				t.Errorf("model %s tier %s upgraded %v explored %v remembered %v; want %s %s %v %v %v",
					r.Model.ID, r.Tier, r.Upgraded, r.Explored, r.Remembered, tc.model, tc.tier, tc.upgraded, tc.explored, tc.remember)
			}
			ref, _ := c.Router(router)
			if !r.Routed || r.Reference != ref.Reference {
				t.Errorf("routed %v reference %v", r.Routed, r.Reference)
			}
			for _, cand := range r.Candidates {
				if cand.Provider == nil || cand.Provider.Name != cand.Path.Provider || !belongs(cand) {
					t.Errorf("candidate %s: provider or model does not match its path", PathKey(cand))
				}
			}
			if draws != tc.draws {
				t.Errorf("rnd drawn %d times, want %d", draws, tc.draws)
			}
		})
	}
}

// belongs reports whether the candidate's path is one of its model's.
func belongs(c Candidate) bool {
	for i := range c.Model.Paths {
		if &c.Model.Paths[i] == c.Path {
			return true
		}
	}
	return false
}

func TestSelectRoutedErrors(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		name   string
		router string
		k      Constraints
		err    error
		param  string
	}{
		{"tier_strict with no open path at the tier", "router-now", Constraints{Dialect: translate.Chat, Tier: "standard", TierStrict: true}, ErrTierUnavailable, "tier"},
		{"embeddings router on chat", "router-embed-1", Constraints{Dialect: translate.Chat, Tier: "standard"}, ErrNoPath, "model"},
		{"completion router on embeddings", "router-1", Constraints{Dialect: translate.Embeddings, Tier: "standard"}, ErrNoPath, "model"},
		{"quantization leaves the reference no realtime path", "router-1", Constraints{Dialect: translate.Chat, Tier: "realtime", Quantization: "q4"}, ErrTierUnavailable, "tier"},
		{"quantization leaves no path", "router-embed-1", Constraints{Dialect: translate.Embeddings, Tier: "standard", Quantization: "q8"}, ErrNoPath, "quantization"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.SelectRouted(tc.router, tc.k, Gating{}, nil, nil)
			var pe *PathError
			if !errors.Is(err, tc.err) || !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("error %v, want %v naming %q", err, tc.err, tc.param)
			}
		})
	}
	if _, err := c.SelectRouted("router-2", Constraints{Dialect: translate.Chat}, Gating{}, nil, nil); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown router: %v", err)
	}
}

// A caller-chosen quantization stands in for full quality: the reference's
// q4 path is then quality-preserving and open to calls with no gates.
func TestSelectRoutedQuantization(t *testing.T) {
	c := testCatalog(t)
	r, err := c.SelectRouted("router-1", Constraints{Dialect: translate.Chat, Tier: "batch", Quantization: "q4"}, Gating{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(r); !slices.Equal(got, []string{keyPartnerQ4}) || r.Upgraded {
		t.Errorf("candidates %v upgraded %v", got, r.Upgraded)
	}
}

// Over many draws the explored share matches Explore.
func TestSelectRoutedExploreShare(t *testing.T) {
	c := testCatalog(t)
	g := Gating{OperationID: "op_1", Gates: gatesOf}
	rng := rand.New(rand.NewPCG(1, 2))
	explored := 0
	const n = 20000
	for range n {
		r, err := c.SelectRouted("router-1", Constraints{Dialect: translate.Chat, Tier: "standard"}, g, &Evidence{}, rng.Float64)
		if err != nil {
			t.Fatal(err)
		}
		if r.Explored {
			explored++
		}
	}
	if share := float64(explored) / n; share < 0.04 || share > 0.06 {
		t.Errorf("explored share %.4f, want about %v", share, DefaultExplore)
	}
}

func TestAddRouter(t *testing.T) {
	c := testCatalog(t)
	var ids, owners []string
	for _, m := range c.Models() {
		ids = append(ids, m.ID)
		owners = append(owners, m.OwnedBy)
	}
	if !slices.Equal(ids[len(ids)-3:], []string{"router-1", "router-now", "router-embed-1"}) || owners[len(owners)-1] != "router" {
		t.Errorf("models %v owned by %v", ids, owners)
	}
	r, ok := c.Router("router-1")
	if !ok || r.Explore != DefaultExplore || len(r.Pool) != 3 || r.Entry.Description == "" || len(c.Routers()) != 3 {
		t.Fatalf("router-1: %+v", r)
	}
	if _, err := c.Model("router-1"); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("a router is not a pinned model: %v", err)
	}
	if _, err := c.Select("router-1", Constraints{Dialect: translate.Chat, Tier: "standard"}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("pinned selection of a router id: %v", err)
	}
	cases := []struct {
		cfg  RouterConfig
		want string
	}{
		{RouterConfig{ID: "", Reference: "meta/llama-70b"}, "non-empty"},
		{RouterConfig{ID: "meta/router", Reference: "meta/llama-70b"}, "no '/'"},
		{RouterConfig{ID: "router-1", Reference: "meta/llama-70b"}, "declared twice"},
		{RouterConfig{ID: "local/llama-8b", Reference: "meta/llama-70b"}, "no '/'"},
		{RouterConfig{ID: "r", Reference: "meta/nope"}, "unknown model"},
		{RouterConfig{ID: "r", Reference: "meta/llama-70b", Pool: []string{"nope/x"}}, "unknown model"},
		{RouterConfig{ID: "r", Reference: "openai/embed-small"}, "not a completion model"},
		{RouterConfig{ID: "r", Embedding: true, Reference: "openai/embed-small", Pool: []string{"openai/gpt-mini"}}, "not an embeddings model"},
		{RouterConfig{ID: "r", Reference: "meta/llama-70b", Explore: 1.5}, "explore"},
	}
	for _, tc := range cases {
		if err := c.AddRouter(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.cfg, err, tc.want)
		}
	}
	if err := c.AddRouter(RouterConfig{ID: "router-quiet", Reference: "meta/llama-70b", Explore: -1}); err != nil {
		t.Fatal(err)
	}
	quiet, _ := c.Router("router-quiet")
	draws := 0
	if _, err := c.SelectRouted("router-quiet", Constraints{Dialect: translate.Chat, Tier: "standard"}, Gating{OperationID: "op", Gates: gatesOf}, nil, fixed(0, &draws)); err != nil || quiet.Explore != 0 || draws != 0 {
		t.Errorf("exploration switched off: explore %v, %d draws, %v", quiet.Explore, draws, err)
	}
}

func BenchmarkSelectRouted(b *testing.B) {
	c := testCatalog(b)
	ev := &Evidence{}
	for _, k := range []string{keyPartnerQ4, keyMini} {
		feed(ev, "op_1", k, 50, 0.1)
	}
	for i := range 10000 {
		ev.RememberExchange(fmt.Sprintf("fp_p_%d", i), "op_1", keyPartnerQ4)
	}
	g := Gating{OperationID: "op_1", Gates: gatesOf, PromptFingerprint: "fp_p_none"}
	k := Constraints{Dialect: translate.Chat, Tier: "standard"}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SelectRouted("router-1", k, g, ev, rng.Float64); err != nil {
			b.Fatal(err)
		}
	}
}
