package routing

import (
	"fmt"
	"math"
	"slices"

	"github.com/modelgate/gateway/translate"
)

// DefaultRoutedShare is the share of the reference's direct price a routed
// call is billed at: the pricing promise is at least 5% off direct.
const DefaultRoutedShare = 0.95

// defaultTierMultiplier is the multiplier of a tier the configuration does
// not price: batch waits in a queue and costs half.
func defaultTierMultiplier(tier string) float64 {
	if tier == "batch" {
		return 0.5
	}
	return 1
}

// Pricing turns a served call's usage into what the caller is billed.
// Its zero value bills at the defaults.
type Pricing struct {
	// TierMultipliers scale the direct price per tier. A tier left out
	// takes its default: realtime 1, standard 1, batch 0.5. A multiplier
	// only ever lowers the bill: values above 1 count as 1.
	TierMultipliers map[string]float64
	// RoutedShare is the share of the reference's direct price a routed
	// call is billed at. Zero means DefaultRoutedShare; anything above it
	// counts as DefaultRoutedShare, since the promise is at least 5% off.
	RoutedShare float64
}

// Validate rejects what Bill would silently clamp, so a configuration says
// what it bills.
func (p Pricing) Validate() error {
	for tier, m := range p.TierMultipliers {
		if !slices.Contains(Tiers, tier) {
			return fmt.Errorf("tier multiplier for unknown tier %q", tier)
		}
		if !(m >= 0 && m <= 1) {
			return fmt.Errorf("tier %q multiplier %v: want between 0 and 1", tier, m)
		}
	}
	if !(p.RoutedShare >= 0 && p.RoutedShare <= DefaultRoutedShare) {
		return fmt.Errorf("routed share %v: want between 0 and %v", p.RoutedShare, DefaultRoutedShare)
	}
	return nil
}

// Bill returns what the caller is billed for a served call and what the
// upstream charges for it; both nil when the usage is unknown. route is the
// route as served (Route.Served): its first candidate answered.
//
// A pinned call is billed at its model's direct price. A routed call is
// billed at the routed share of its reference's direct price, or at the
// direct price of the pool model that served it when that is lower, so the
// caller keeps what routing saves. Both times the tier's multiplier. The bill is rounded down to whole
// pico-dollars, so rounding never lifts it above those bounds.
func (p Pricing) Bill(route Route, usage translate.Usage) (billed *float64, upstream *float64) {
	if len(route.Candidates) > 0 {
		upstream = route.Candidates[0].Path.Cost.Cost(usage)
	}
	ref := route.Reference
	if ref == nil {
		ref = route.Model
	}
	if ref == nil {
		return nil, upstream
	}
	direct := ref.Price.Cost(usage)
	if direct == nil {
		return nil, upstream
	}
	// Direct costs are whole pico-dollars already; integers of that size
	// are exact in a float64, so the arithmetic is done on them.
	base := math.Round(*direct * 1e12)
	if route.Routed {
		base = math.Floor(base * p.share())
		// A call served by a cheaper model of the pool is billed at that
		// model's direct price: what routing saves reaches the caller. It
		// never exceeds the routed share of the reference's price.
		if route.Model != nil && route.Model != ref {
			if served := route.Model.Price.Cost(usage); served != nil {
				base = math.Min(base, math.Round(*served*1e12))
			}
		}
	}
	b := math.Floor(base*p.multiplier(route.Tier)) / 1e12
	return &b, upstream
}

// multiplier is the tier's multiplier, clamped to [0, 1].
func (p Pricing) multiplier(tier string) float64 {
	m, ok := p.TierMultipliers[tier]
	if !ok {
		m = defaultTierMultiplier(tier)
	}
	switch {
	case math.IsNaN(m) || m > 1:
		return 1
	case m < 0:
		return 0
	}
	return m
}

// share is the routed share, clamped to (0, DefaultRoutedShare].
func (p Pricing) share() float64 {
	s := p.RoutedShare
	if !(s > 0) || s > DefaultRoutedShare {
		return DefaultRoutedShare
	}
	return s
}

// DefaultMaxOutputTokens is the output a call is assumed to be able to
// produce when neither the request nor the model's configuration limits
// it: what credit is reserved for before the call is made.
const DefaultMaxOutputTokens = 16384

// MaxOutput is the most output tokens a call on route may produce: the
// request's own limit when it sets one (requested > 0), else the limit of
// the model billed for it (the reference, for a routed call).
func (r Route) MaxOutput(requested int64) int64 {
	if requested > 0 {
		return requested
	}
	m := r.Reference
	if m == nil {
		m = r.Model
	}
	if m != nil && m.MaxOutputTokens > 0 {
		return m.MaxOutputTokens
	}
	return DefaultMaxOutputTokens
}

// EstimateInputTokens bounds the input tokens of a request body from
// above without tokenizing it: a token of text is rarely shorter than two
// bytes of its JSON encoding, so half the body's length is what a
// reservation assumes.
func EstimateInputTokens(bodyLen int) int64 {
	return int64(bodyLen+1) / 2
}

// WorstCase is the most Bill can charge for a call on route that reads at
// most inputTokens and writes at most outputTokens: the reference's (or the
// pinned model's) direct price, times the routed share for a routed call and
// the tier's multiplier. Whatever path then serves the call, its bill for
// that usage is no higher. 0 for a free model.
func (p Pricing) WorstCase(route Route, inputTokens, outputTokens int64) float64 {
	ref := route.Reference
	if ref == nil {
		ref = route.Model
	}
	if ref == nil {
		return 0
	}
	// Every input token at the dearest class: a cache write can cost more
	// than plain input.
	worst := *ref
	worst.Price = Price{Input: ref.Price.MaxInput(), Output: ref.Price.Output}
	bound := Route{Model: &worst, Reference: &worst, Routed: route.Routed, Tier: route.Tier}
	billed, _ := p.Bill(bound, translate.Usage{InputTokens: int(inputTokens), OutputTokens: int(outputTokens), Known: true})
	if billed == nil || *billed == 0 {
		return 0
	}
	// Rounded up past the next whole nano-dollar (the ledger's unit), so
	// that float rounding in a bill by class never leaves the reservation
	// short of it.
	return math.Ceil(*billed*1e9+1) / 1e9
}

// EstimateTextTokens is the typical number of tokens of n bytes of text
// (about four bytes a token): how a stream that ended before its upstream
// reported usage is counted for what it relayed.
func EstimateTextTokens(n int) int {
	return (n + 3) / 4
}
