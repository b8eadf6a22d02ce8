package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/modelgate/gateway/translate"
)

func TestBill(t *testing.T) {
	c := testCatalog(t)
	usage := translate.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, Known: true}
	pinned, err := c.Select("meta/llama-70b", Constraints{Dialect: translate.Chat, Tier: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	routed := func(tier string, g Gating, ev *Evidence) Route {
		r, err := c.SelectRouted("router-1", Constraints{Dialect: translate.Chat, Tier: tier}, g, ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ev := &Evidence{}
	feed(ev, "op_1", keySmall, 30, 0.1)
	cheap := routed("batch", Gating{OperationID: "op_1", Gates: gatesOf}, ev)
	pinnedBatch := pinned
	pinnedBatch.Tier = "batch"
	cases := []struct {
		name             string
		p                Pricing
		route            Route
		usage            translate.Usage
		billed, upstream *float64
	}{
		// llama-70b direct: 1 + 3 = 4 USD for a million tokens each way.
		{"pinned at direct", Pricing{}, pinned, usage, ptr(4), ptr(3.6)},
		{"pinned batch at half", Pricing{}, pinnedBatch, usage, ptr(2), ptr(3.6)},
		{"routed at 95% of the reference", Pricing{}, routed("realtime", Gating{}, nil), usage, ptr(3.8), ptr(3.6)},
		// The pool model's own direct price is below 95% of the reference's:
		// the caller gets that saving.
		{"routed batch on a cheaper pool model, billed at its own price", Pricing{}, cheap, usage, ptr(0.4), ptr(0.4)},
		{"a lower routed share", Pricing{RoutedShare: 0.8}, routed("realtime", Gating{}, nil), usage, ptr(3.2), ptr(3.6)},
		{"a routed share above 95% is clamped", Pricing{RoutedShare: 1.2}, routed("realtime", Gating{}, nil), usage, ptr(3.8), ptr(3.6)},
		{"a multiplier above 1 is ignored", Pricing{TierMultipliers: map[string]float64{"standard": 1.5}}, pinned, usage, ptr(4), ptr(3.6)},
		{"a configured multiplier", Pricing{TierMultipliers: map[string]float64{"standard": 0.9}}, pinned, usage, ptr(3.6), ptr(3.6)},
		{"unknown usage", Pricing{}, pinned, translate.Usage{}, nil, nil},
		{"upgraded is billed at realtime", Pricing{}, func() Route {
			r, err := c.SelectRouted("router-now", Constraints{Dialect: translate.Chat, Tier: "batch"}, Gating{}, nil, nil)
			if err != nil || !r.Upgraded {
				t.Fatal(r, err)
			}
			return r
		}(), usage, ptr(0.95 * 10), ptr(10)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, u := tc.p.Bill(tc.route, tc.usage)
			if !sameCost(b, tc.billed) || !sameCost(u, tc.upstream) {
				t.Errorf("billed %v upstream %v; want %v %v", show(b), show(u), show(tc.billed), show(tc.upstream))
			}
		})
	}
	// The served candidate's cost is the upstream's, whichever fallback it was.
	r := routed("standard", Gating{}, nil)
	if _, u := (Pricing{}).Bill(r.Served(r.Candidates[1]), usage); !sameCost(u, ptr(3.6)) {
		t.Errorf("upstream of the served fallback: %v", show(u))
	}
}

func TestPricingValidate(t *testing.T) {
	for _, p := range []Pricing{{}, {RoutedShare: 0.5, TierMultipliers: map[string]float64{"batch": 0.25, "realtime": 1}}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	for _, p := range []Pricing{
		{RoutedShare: 0.99},
		{RoutedShare: -0.1},
		{TierMultipliers: map[string]float64{"express": 0.5}},
		{TierMultipliers: map[string]float64{"batch": 1.5}},
		{TierMultipliers: map[string]float64{"batch": math.NaN()}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// Over thousands of random catalogs, usages, tiers and pricing settings:
// no bill is above the direct price of the model it is billed against, a
// routed bill is at most 95% of it, and free models bill zero.
func TestBillProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	price := func() float64 {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return math.Round(rng.Float64()*100*1000) / 1000
		default:
			return rng.Float64() * 200
		}
	}
	checked := map[bool]int{}
	for i := range 5000 {
		c, ids := randomCatalog(t, rng, price)
		ref := ids[rng.IntN(len(ids))]
		if err := c.AddRouter(RouterConfig{ID: "router-1", Reference: ref, Pool: ids}); err != nil {
			t.Fatal(err)
		}
		ev := &Evidence{MinSamples: 2}
		op := Gating{OperationID: "op", Gates: []Gate{{EvaluatorID: "e", MinScore: 0.5}}}
		for _, id := range ids {
			m, _ := c.Model(id)
			for j := range m.Paths {
				for range 3 {
					ev.Add("op", PathKey(Candidate{Path: &m.Paths[j]}), "e", rng.Float64(), true)
				}
			}
		}
		p := Pricing{RoutedShare: []float64{0, 0.5, 0.95, 1, 3}[rng.IntN(5)]}
		if rng.IntN(2) == 0 {
			p.TierMultipliers = map[string]float64{}
			for _, tier := range Tiers {
				p.TierMultipliers[tier] = rng.Float64() * 1.5
			}
		}
		usage := randomUsage(rng)
		k := Constraints{Dialect: translate.Chat, Tier: Tiers[rng.IntN(len(Tiers))], TierStrict: rng.IntN(4) == 0, ForbidPartner: rng.IntN(3) == 0}
		g := Gating{}
		if rng.IntN(2) == 0 {
			g = op
		}
		var routes []Route
		if r, err := c.SelectRouted("router-1", k, g, ev, rng.Float64); err == nil {
			routes = append(routes, r.Served(r.Candidates[rng.IntN(len(r.Candidates))]))
		}
		if r, err := c.Select(ids[rng.IntN(len(ids))], k); err == nil {
			routes = append(routes, r.Served(r.Candidates[rng.IntN(len(r.Candidates))]))
		}
		for _, r := range routes {
			checked[r.Routed]++
			billed, upstream := p.Bill(r, usage)
			direct := r.Reference.Price.Cost(usage)
			if billed == nil || upstream == nil {
				t.Fatalf("case %d: nil bill for known usage", i)
			}
			b, d := pico(*billed), pico(*direct)
			if b > d || b < 0 {
				t.Fatalf("case %d: billed %v above direct %v (%+v)", i, *billed, *direct, r)
			}
			if r.Routed && b*100 > d*95 {
				t.Fatalf("case %d: routed bill %v above 95%% of direct %v", i, *billed, *direct)
			}
			if d == 0 && b != 0 {
				t.Fatalf("case %d: free model billed %v", i, *billed)
			}
			if want := r.Candidates[0].Path.Cost.Cost(usage); *upstream != *want {
				t.Fatalf("case %d: upstream %v, served path costs %v", i, *upstream, *want)
			}
			// What is reserved before the call covers the bill of any
			// split of the same tokens into classes.
			in, out := int64(usage.InputTokens), int64(usage.OutputTokens)
			if worst := p.WorstCase(r, in, out); pico(worst) < b {
				t.Fatalf("case %d: worst case %v below the bill %v of %+v", i, worst, *billed, usage)
			}
		}
	}
	// Guard against a generator that leaves the properties vacuous.
	if checked[true] < 2000 || checked[false] < 2000 {
		t.Errorf("only %d routed and %d pinned bills checked", checked[true], checked[false])
	}
}

// randomCatalog builds a catalog of 1 to 5 completion models with 1 to 4
// random paths each.
func randomCatalog(t *testing.T, rng *rand.Rand, price func() float64) (*Catalog, []string) {
	t.Helper()
	providers := []*Provider{{Name: "a", Dialect: DialectOpenAI}, {Name: "b", Dialect: DialectAnthropic}, {Name: "router-net:partner_3", Dialect: DialectOpenAIChat}}
	var models []*Model
	var ids []string
	for m := range 1 + rng.IntN(5) {
		id := fmt.Sprintf("%s/m%d", []string{"a", "b"}[rng.IntN(2)], m)
		mod := &Model{ID: id, OpenWeight: rng.IntN(2) == 0, Price: randomPrice(rng, price)}
		for p := range 1 + rng.IntN(4) {
			path := Path{Provider: "a", UpstreamModel: fmt.Sprintf("m%d-%d", m, p), Quantization: Quantizations[rng.IntN(3)], ServedBy: "provider",
				Cost: randomPrice(rng, price)}
			if mod.OpenWeight && rng.IntN(2) == 0 {
				path.Provider, path.ServedBy = "router-net:partner_3", "router_network"
			} else if rng.IntN(2) == 0 {
				path.Provider = "b"
			}
			for _, tier := range Tiers {
				if rng.IntN(3) > 0 {
					path.Tiers = append(path.Tiers, tier)
				}
			}
			mod.Paths = append(mod.Paths, path)
		}
		models = append(models, mod)
		ids = append(ids, id)
	}
	c, err := NewCatalog(providers, models, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c, ids
}

// randomPrice is a price whose cache classes are each either left to the
// provider's published ratios or set at random.
func randomPrice(rng *rand.Rand, price func() float64) Price {
	p := Price{Input: price(), Output: price()}
	for _, c := range []**float64{&p.CacheRead, &p.CacheWrite, &p.CacheWrite1h} {
		if rng.IntN(2) == 0 {
			v := price()
			*c = &v
		}
	}
	return p
}

// randomUsage is a known usage with a random share of its input in each
// cache class (sometimes none, sometimes nearly all of it, as on agent
// traffic).
func randomUsage(rng *rand.Rand) translate.Usage {
	u := translate.Usage{InputTokens: rng.IntN(2_000_000), OutputTokens: rng.IntN(200_000), Known: true}
	left := u.InputTokens
	for _, c := range []*int{&u.CacheReadTokens, &u.CacheWriteTokens, &u.CacheWrite1hTokens} {
		if left > 0 && rng.IntN(3) > 0 {
			*c = rng.IntN(left + 1)
			left -= *c
		}
	}
	return u
}

// TestClassPricesHandComputed: a bill by token class, to the pico-dollar.
// An Anthropic model at 3 / 15 USD per 1M input / output tokens takes the
// published ratios: cache reads 0.30, 5-minute writes 3.75, one-hour writes
// 6.00. 10,000 input tokens of which 8,000 read, 1,000 written for 5
// minutes, 500 for one hour (so 500 plain), and 200 output tokens cost
// 500*3 + 8000*0.3 + 1000*3.75 + 500*6 + 200*15 = 13,650 USD per 1M, so
// 0.01365 USD; billing all input at the input price would be 0.033.
func TestClassPricesHandComputed(t *testing.T) {
	c, err := NewCatalog([]*Provider{{Name: "anthropic", Dialect: DialectAnthropic}, {Name: "openai", Dialect: DialectOpenAI}},
		[]*Model{
			{ID: "anthropic/claude", Price: Price{Input: 3, Output: 15}, Paths: []Path{{Provider: "anthropic", UpstreamModel: "claude",
				Quantization: "full", ServedBy: "provider", Tiers: Tiers, Cost: Price{Input: 3, Output: 15}}}},
			{ID: "openai/gpt", Price: Price{Input: 2, Output: 8, CacheWrite: ptr(2.5)}, Paths: []Path{{Provider: "openai", UpstreamModel: "gpt",
				Quantization: "full", ServedBy: "provider", Tiers: Tiers, Cost: Price{Input: 2, Output: 8}}}},
		}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	usage := translate.Usage{InputTokens: 10_000, OutputTokens: 200, CacheReadTokens: 8_000, CacheWriteTokens: 1_000, CacheWrite1hTokens: 500, Known: true}
	for _, tc := range []struct {
		model string
		want  int64 // pico-USD
	}{
		{"anthropic/claude", 13_650_000_000},
		// OpenAI: cached input at half the input price, writes as set
		// (2.5) or at the input price: 500*2 + 8000*1 + 1000*2.5 + 500*2 + 200*8.
		{"openai/gpt", 14_100_000_000},
	} {
		r, err := c.Select(tc.model, Constraints{Dialect: translate.Chat, Tier: "realtime"})
		if err != nil {
			t.Fatal(err)
		}
		billed, upstream := Pricing{}.Bill(r, usage)
		if billed == nil || pico(*billed) != tc.want {
			t.Errorf("%s: billed %v, want %v pico-USD", tc.model, show(billed), tc.want)
		}
		if upstream == nil || (tc.model == "anthropic/claude" && pico(*upstream) != tc.want) {
			t.Errorf("%s: upstream cost %v", tc.model, show(upstream))
		}
		// The reservation assumes every input token at the dearest class
		// (and one nano-dollar more, against rounding).
		worst := Pricing{}.WorstCase(r, 10_000, 200)
		if tc.model == "anthropic/claude" && pico(worst) != (10_000*6+200*15)*1_000_000+1000 {
			t.Errorf("worst case %v, want every input token at the one-hour write price", worst)
		}
	}
}

// pico returns a cost in whole pico-dollars, the unit bills are kept in.
func pico(x float64) int64 { return int64(math.Round(x * 1e12)) }

func ptr(x float64) *float64 { return &x }

func sameCost(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return pico(*a) == pico(*b)
}

func show(x *float64) string {
	if x == nil {
		return "null"
	}
	return fmt.Sprint(*x)
}

// TestReadmeWorkedExample is the README's agent turn: 45,000 input tokens
// read from the cache, 2,000 written to it, 3,000 other, 800 output, on a
// 3 / 15 Anthropic model with its class prices written out.
func TestReadmeWorkedExample(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: ptr(0.30), CacheWrite: ptr(3.75), CacheWrite1h: ptr(6)}
	u := translate.Usage{InputTokens: 50_000, OutputTokens: 800, CacheReadTokens: 45_000, CacheWriteTokens: 2_000, Known: true}
	if got := p.Cost(u); got == nil || pico(*got) != 42_000_000_000 {
		t.Fatalf("cost %v, want 0.042", show(got))
	}
	if flat := (Price{Input: 3, Output: 15}).Cost(translate.Usage{InputTokens: 50_000, OutputTokens: 800, Known: true}); pico(*flat) != 162_000_000_000 {
		t.Fatalf("flat cost %v, want 0.162", *flat)
	}
}
