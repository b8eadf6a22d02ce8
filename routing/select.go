package routing

import (
	"errors"
	"fmt"

	"github.com/modelgate/gateway/translate"
)

// Constraints are what a request asks of the route.
type Constraints struct {
	// Dialect is the client's wire shape.
	Dialect translate.Dialect
	// Tier is the requested tier, the default already applied.
	Tier string
	// TierStrict forbids serving at another tier.
	TierStrict bool
	// ForbidPartner removes partner-network paths (forbid_atlas_network).
	ForbidPartner bool
	// Quantization, when set, requires paths of that quantization
	// (embeddings). On a router it also stands in for "full" as the
	// quality the reference is served at, since the caller chose it.
	Quantization string
}

// Candidate is one path to try, with its provider and the model it serves.
type Candidate struct {
	// Path is the catalog path.
	Path *Path
	// Provider is the provider the path names.
	Provider *Provider
	// Model is the catalog model the path belongs to: a routed call's
	// fallbacks may belong to other models than its first candidate.
	Model *Model
}

// Route is the outcome of route selection: the paths to try in order.
type Route struct {
	// Model is the catalog model that serves the first candidate.
	Model *Model
	// Reference is the model whose direct price the call is billed
	// against: the pinned model itself, or the router's reference model.
	Reference *Model
	// Candidates are tried in order until one answers.
	Candidates []Candidate
	// Tier is the tier the call is served and billed at.
	Tier string
	// Upgraded is true when a cheaper tier was asked for and the call is
	// served at realtime because no path at that tier was open.
	Upgraded bool
	// Routed is true for a router id (router-1, router-embed-1): the call
	// is billed at the routed share of the reference's direct price.
	Routed bool
	// Explored is true when the first candidate is an unproven path tried
	// to gather gate evidence; the fallbacks are the route the call would
	// otherwise have taken.
	Explored bool
	// Remembered is true when the first candidate is the path the exchange
	// memory recalled for this prompt and operation.
	Remembered bool
}

// Served narrows the route to the candidate that answered, so billing and
// records see the path that actually served the call.
func (r Route) Served(c Candidate) Route {
	r.Candidates = []Candidate{c}
	if c.Model != nil {
		r.Model = c.Model
	}
	return r
}

// Route-selection errors. Each becomes a 400 naming the parameter that
// closed every path.
var (
	// ErrTierUnavailable: tier_strict and no path at the requested tier.
	ErrTierUnavailable = errors.New("no path serves the requested tier")
	// ErrNoPath: the constraints removed every path of the model.
	ErrNoPath = errors.New("no path satisfies the request")
)

// PathError says which request parameter left no path.
type PathError struct {
	// Err is ErrTierUnavailable or ErrNoPath.
	Err error
	// Param is the request parameter the error names ("tier", "model",
	// "forbid_atlas_network", "quantization").
	Param string
	// Msg is the message the client reads.
	Msg string
}

// Error returns the client-facing message.
func (e *PathError) Error() string { return e.Msg }

// Unwrap returns ErrTierUnavailable or ErrNoPath.
func (e *PathError) Unwrap() error { return e.Err }

// Select returns the paths a pinned model id may be served by, in order.
func (c *Catalog) Select(modelID string, k Constraints) (Route, error) {
	m, err := c.Model(modelID)
	if err != nil {
		return Route{}, err
	}
	if (k.Dialect == translate.Embeddings) != m.Embedding {
		kind := "a completion"
		if m.Embedding {
			kind = "an embeddings"
		}
		return Route{}, &PathError{Err: ErrNoPath, Param: "model", Msg: fmt.Sprintf("model %q is %s model", modelID, kind)}
	}
	open := make([]Candidate, 0, len(m.Paths))
	removedBy := ""
	for i := range m.Paths {
		p := &m.Paths[i]
		if k.ForbidPartner && p.ServedBy == "router_network" {
			removedBy = "forbid_atlas_network"
			continue
		}
		if k.Quantization != "" && p.Quantization != k.Quantization {
			removedBy = "quantization"
			continue
		}
		open = append(open, Candidate{Path: p, Provider: c.providers[p.Provider], Model: m})
	}
	if len(open) == 0 {
		return Route{}, &PathError{Err: ErrNoPath, Param: removedBy,
			Msg: fmt.Sprintf("no path of model %q satisfies %s", modelID, removedBy)}
	}
	r := Route{Model: m, Reference: m, Tier: k.Tier}
	for _, cand := range open {
		if cand.Path.Serves(k.Tier) {
			r.Candidates = append(r.Candidates, cand)
		}
	}
	if len(r.Candidates) > 0 {
		return r, nil
	}
	if k.TierStrict || k.Tier == "realtime" {
		return Route{}, &PathError{Err: ErrTierUnavailable, Param: "tier",
			Msg: fmt.Sprintf("no path of model %q serves tier %q", modelID, k.Tier)}
	}
	// No path at the cheaper tier: serve and bill at realtime, and say so.
	r.Tier, r.Upgraded = "realtime", true
	for _, cand := range open {
		if cand.Path.Serves("realtime") {
			r.Candidates = append(r.Candidates, cand)
		}
	}
	if len(r.Candidates) == 0 {
		return Route{}, &PathError{Err: ErrTierUnavailable, Param: "tier",
			Msg: fmt.Sprintf("no path of model %q serves tier %q or realtime", modelID, k.Tier)}
	}
	return r, nil
}
