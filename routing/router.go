package routing

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/modelgate/gateway/translate"
)

// DefaultExplore is the share of gated calls that try an unproven path when
// a router's configuration leaves Explore at zero: enough traffic to gather
// evidence within days, little enough that refunds of failed tries stay
// small.
const DefaultExplore = 0.05

// RouterConfig declares a router id such as router-1.
type RouterConfig struct {
	// ID is the client-facing id, e.g. "router-1" or "router-embed-1". It
	// has no '/': an id with one pins a provider's model.
	ID string
	// Embedding marks a router for POST /embeddings: its reference and
	// pool are embeddings models.
	Embedding bool
	// Reference is the id of the model the router stands in for, the one
	// the caller would otherwise pin. Its direct price bounds a routed
	// call's bill, and its full-quality paths serve every call that no
	// cheaper path may take.
	Reference string
	// Pool lists the ids of the other models a call may be routed to once
	// a path of theirs passes the call's operation's gates. The reference
	// may be listed; it is a candidate in any case.
	Pool []string
	// Explore is the share of gated calls that try the next cheaper path
	// with no verdict yet. Zero means DefaultExplore; a negative value
	// switches exploration off.
	Explore float64
	// Description is listed by GET /models. Default: a sentence naming the
	// reference.
	Description string
}

// Router is a router id of the catalog, resolved against its models.
type Router struct {
	// Entry is what GET /models lists for the router: owned_by "router",
	// no paths.
	Entry *Model
	// Reference is the model the router stands in for.
	Reference *Model
	// Pool are the other candidate models, without the reference.
	Pool []*Model
	// Explore is the share of gated calls that explore, in [0, 1].
	Explore float64

	// paths are every path of the reference and the pool, cheapest first
	// and in declaration order among equals, so a call walks them once.
	paths []routerPath
}

// routerPath is one path a router may take, with what selection compares.
type routerPath struct {
	cand Candidate
	key  string
	// cost ranks paths by upstream price: input plus output per 1M tokens,
	// the cost of a call with as many output as input tokens. It keeps the
	// order independent of any one call's token mix.
	cost float64
	// rank is the declaration order: the reference's paths first.
	rank int
}

// Gating is what a call brings to routed selection from its operation.
type Gating struct {
	// OperationID is the resolved operation id; empty for a call with no
	// operation, which has no gate evidence.
	OperationID string
	// Gates are the operation's ship gates.
	Gates []Gate
	// PromptFingerprint is the call's fp_p_ fingerprint, the key of the
	// exchange memory.
	PromptFingerprint string
}

// PathKey names a path in gate evidence, the exchange memory and upstream
// health: provider "/" upstream model "@" quantization. Two catalog paths
// with the same key reach the same upstream weights, so they share evidence.
func PathKey(c Candidate) string {
	return c.Path.Provider + "/" + c.Path.UpstreamModel + "@" + c.Path.Quantization
}

// AddRouter adds a router id to the catalog. The reference and every pool
// model must be in the catalog (a model whose providers are all switched
// off is not: the error then wraps ErrUnknownModel) and of the router's
// kind. Call it while building the catalog, before any lookup.
func (c *Catalog) AddRouter(cfg RouterConfig) error {
	if cfg.ID == "" || strings.Contains(cfg.ID, "/") {
		return fmt.Errorf("router id %q: must be non-empty and contain no '/'", cfg.ID)
	}
	if _, dup := c.models[cfg.ID]; dup {
		return fmt.Errorf("router %q: a model has that id", cfg.ID)
	}
	if _, dup := c.routers[cfg.ID]; dup {
		return fmt.Errorf("router %q declared twice", cfg.ID)
	}
	kind := func(role, id string) (*Model, error) {
		m, err := c.Model(id)
		if err != nil {
			return nil, fmt.Errorf("router %q %s: %w", cfg.ID, role, err)
		}
		if m.Embedding != cfg.Embedding {
			want := "a completion"
			if cfg.Embedding {
				want = "an embeddings"
			}
			return nil, fmt.Errorf("router %q %s %q: not %s model", cfg.ID, role, id, want)
		}
		return m, nil
	}
	ref, err := kind("reference", cfg.Reference)
	if err != nil {
		return err
	}
	explore := cfg.Explore
	switch {
	case math.IsNaN(explore) || explore > 1:
		return fmt.Errorf("router %q: explore %v (want a share between 0 and 1)", cfg.ID, explore)
	case explore == 0:
		explore = DefaultExplore
	case explore < 0:
		explore = 0
	}
	r := &Router{Reference: ref, Explore: explore}
	for _, id := range cfg.Pool {
		m, err := kind("pool model", id)
		if err != nil {
			return err
		}
		if m != ref && !slices.Contains(r.Pool, m) {
			r.Pool = append(r.Pool, m)
		}
	}
	desc := cfg.Description
	if desc == "" {
		desc = fmt.Sprintf("Routes each call to the cheapest path that keeps the quality of %s; billed below its direct price.", ref.ID)
	}
	r.Entry = &Model{ID: cfg.ID, OwnedBy: "router", Description: desc, Embedding: cfg.Embedding}
	for _, m := range append([]*Model{ref}, r.Pool...) {
		for i := range m.Paths {
			p := &m.Paths[i]
			cand := Candidate{Path: p, Provider: c.providers[p.Provider], Model: m}
			r.paths = append(r.paths, routerPath{cand: cand, key: PathKey(cand), cost: p.Cost.Input + p.Cost.Output, rank: len(r.paths)})
		}
	}
	slices.SortStableFunc(r.paths, func(a, b routerPath) int {
		switch {
		case a.cost < b.cost:
			return -1
		case a.cost > b.cost:
			return 1
		}
		return 0
	})
	c.routers[cfg.ID] = r
	c.routerOrder = append(c.routerOrder, r)
	c.order = append(c.order, r.Entry)
	return nil
}

// Router returns the router with the given id.
func (c *Catalog) Router(id string) (*Router, bool) {
	r, ok := c.routers[id]
	return r, ok
}

// Routers lists the catalog's routers in the order they were added.
func (c *Catalog) Routers() []*Router { return c.routerOrder }

// option is one router path still open to a call after its constraints.
type option struct {
	*routerPath
	// qp marks a quality-preserving path: the reference model at full
	// quality (or at the quantization the caller asked for).
	qp bool
	// verdict is the path's gate verdict for the call's operation;
	// Unknown for a call with no gates.
	verdict Verdict
}

// SelectRouted chooses the paths a router id's call is served by, in order.
//
// A realtime call takes the reference's full-quality paths in declaration
// order. A standard or batch call takes the cheapest open path that serves
// its tier, then the next cheapest as fallbacks: a path is open when it is
// quality-preserving (the reference at full quality), or when it is cheaper
// than every quality-preserving path and passes the call's gates on ev.
// A call with no operation or no gates therefore only ever saves through
// the reference's own cheaper full-quality paths.
//
// A path the exchange memory recalls for this prompt and operation goes
// first while no verdict has failed it since. Otherwise, with probability
// Explore (rnd() < Explore, rnd drawn only when there is a path to
// explore), a gated call first tries the next cheaper path with no verdict
// yet. When no path at the requested tier is open, a tier_strict call fails
// with ErrTierUnavailable and any other call is served at realtime,
// Upgraded; an explored path serves at the requested tier even then, since
// exploration never costs the caller.
//
// ev and rnd may be nil: no evidence, no exploration.
func (c *Catalog) SelectRouted(routerID string, k Constraints, g Gating, ev *Evidence, rnd func() float64) (Route, error) {
	r, ok := c.routers[routerID]
	if !ok {
		return Route{}, fmt.Errorf("%w: %q", ErrUnknownModel, routerID)
	}
	if (k.Dialect == translate.Embeddings) != r.Entry.Embedding {
		kind := "a completion"
		if r.Entry.Embedding {
			kind = "an embeddings"
		}
		return Route{}, &PathError{Err: ErrNoPath, Param: "model", Msg: fmt.Sprintf("model %q is %s model", routerID, kind)}
	}
	gated := g.OperationID != "" && len(g.Gates) > 0
	opts, baseline, removedBy := r.options(k, g, gated, ev)
	if len(opts) == 0 {
		return Route{}, &PathError{Err: ErrNoPath, Param: removedBy,
			Msg: fmt.Sprintf("no path of router %q satisfies %s", routerID, removedBy)}
	}
	route := Route{Reference: r.Reference, Tier: k.Tier, Routed: true}
	if k.Tier == "realtime" {
		return r.realtime(route, opts, removedBy)
	}
	chosen := openAt(opts, k.Tier, baseline)
	if gated && g.PromptFingerprint != "" {
		if key, ok := ev.RememberedPath(g.PromptFingerprint, g.OperationID); ok {
			if o := recalled(opts, key, k.Tier, baseline); o != nil {
				chosen = slices.Insert(slices.DeleteFunc(chosen, func(x *option) bool { return x == o }), 0, o)
				route.Remembered = true
			}
		}
	}
	if len(chosen) == 0 {
		if k.TierStrict {
			return Route{}, &PathError{Err: ErrTierUnavailable, Param: "tier",
				Msg: fmt.Sprintf("no path of router %q open to this call serves tier %q", routerID, k.Tier)}
		}
		up, err := r.realtime(route, opts, removedBy)
		if err != nil {
			return Route{}, err
		}
		route = up
	}
	if gated && !route.Remembered && rnd != nil && r.Explore > 0 {
		base := baseline
		if len(chosen) > 0 {
			base = chosen[0].cost
		}
		if try := nextUnproven(opts, k.Tier, base); try != nil && rnd() < r.Explore {
			route.Explored, route.Tier, route.Upgraded = true, k.Tier, false
			route.Candidates = slices.Insert(route.Candidates, 0, try.cand)
		}
	}
	route.Candidates = slices.Grow(route.Candidates, len(chosen))
	for _, o := range chosen {
		route.Candidates = append(route.Candidates, o.cand)
	}
	route.Model = route.Candidates[0].Model
	return route, nil
}

// options returns the router's paths left by the call's constraints,
// cheapest first, with their verdicts; the cost of the cheapest
// quality-preserving one (+Inf when there is none); and the parameter that
// removed a path, for the error when none is left.
func (r *Router) options(k Constraints, g Gating, gated bool, ev *Evidence) (opts []option, baseline float64, removedBy string) {
	want := "full"
	if k.Quantization != "" {
		want = k.Quantization
	}
	opts = make([]option, 0, len(r.paths))
	baseline = math.Inf(1)
	for i := range r.paths {
		p := &r.paths[i]
		if k.ForbidPartner && p.cand.Path.ServedBy == "router_network" {
			removedBy = "forbid_atlas_network"
			continue
		}
		if k.Quantization != "" && p.cand.Path.Quantization != k.Quantization {
			removedBy = "quantization"
			continue
		}
		o := option{routerPath: p, qp: p.cand.Model == r.Reference && p.cand.Path.Quantization == want}
		if o.qp {
			baseline = min(baseline, p.cost)
		} else if gated {
			o.verdict = ev.Verdict(g.OperationID, p.key, g.Gates)
		}
		opts = append(opts, o)
	}
	return opts, baseline, removedBy
}

// openAt returns the open paths that serve the tier, cheapest first. Every
// open gated path is cheaper than every quality-preserving one, so the
// reference's full paths come last, as the fallbacks of the cheaper ones.
func openAt(opts []option, tier string, baseline float64) []*option {
	var open []*option
	for i := range opts {
		o := &opts[i]
		if o.cand.Path.Serves(tier) && (o.qp || (o.verdict == Pass && o.cost < baseline)) {
			open = append(open, o)
		}
	}
	return open
}

// recalled returns the remembered path when the call may still take it:
// it serves the tier, and it is quality-preserving or a cheaper path that
// passed for this very prompt and has not failed the gates since.
func recalled(opts []option, key, tier string, baseline float64) *option {
	for i := range opts {
		o := &opts[i]
		if o.key == key && o.cand.Path.Serves(tier) && (o.qp || (o.verdict != Fail && o.cost < baseline)) {
			return o
		}
	}
	return nil
}

// nextUnproven returns the dearest path cheaper than base that serves the
// tier and has no verdict: the next rung down, not the cheapest, as one
// step down is the likeliest to hold the operation's quality.
func nextUnproven(opts []option, tier string, base float64) *option {
	var try *option
	for i := range opts {
		o := &opts[i]
		if !o.qp && o.verdict == Unknown && o.cost < base && o.cand.Path.Serves(tier) && (try == nil || o.cost > try.cost) {
			try = o
		}
	}
	return try
}

// realtime fills route with the reference's full-quality paths that serve
// realtime, in declaration order: realtime takes the best path at once and
// never trades quality for price. A route that arrives at a cheaper tier is
// marked Upgraded.
func (r *Router) realtime(route Route, opts []option, removedBy string) (Route, error) {
	var full []*option
	refLeft := false
	for i := range opts {
		o := &opts[i]
		refLeft = refLeft || o.cand.Model == r.Reference
		if o.qp && o.cand.Path.Serves("realtime") {
			full = append(full, o)
		}
	}
	if len(full) == 0 {
		if !refLeft && removedBy != "" {
			return Route{}, &PathError{Err: ErrNoPath, Param: removedBy,
				Msg: fmt.Sprintf("no path of model %q, which router %q stands in for, satisfies %s", r.Reference.ID, r.Entry.ID, removedBy)}
		}
		return Route{}, &PathError{Err: ErrTierUnavailable, Param: "tier",
			Msg: fmt.Sprintf("no full-quality path of model %q, which router %q stands in for, serves tier realtime", r.Reference.ID, r.Entry.ID)}
	}
	slices.SortFunc(full, func(a, b *option) int { return a.rank - b.rank })
	if route.Tier != "realtime" {
		route.Tier, route.Upgraded = "realtime", true
	}
	route.Candidates = make([]Candidate, 0, len(full)+1)
	for _, o := range full {
		route.Candidates = append(route.Candidates, o.cand)
	}
	route.Model = route.Candidates[0].Model
	return route, nil
}
