package routing

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/modelgate/gateway/translate"
)

// Provider dialects: which wire shapes an upstream speaks natively.
const (
	// DialectOpenAI speaks chat completions, responses and embeddings (api.openai.com).
	DialectOpenAI = "openai"
	// DialectOpenAIChat speaks chat completions and embeddings only: the
	// OpenAI-compatible servers (vLLM, llama.cpp, Ollama).
	DialectOpenAIChat = "openai_chat"
	// DialectAnthropic speaks messages (api.anthropic.com).
	DialectAnthropic = "anthropic"
)

// Quantizations a path may serve at.
var Quantizations = []string{"full", "q8", "q4"}

// Tiers a path may serve.
var Tiers = []string{"realtime", "standard", "batch"}

// Provider is one upstream service.
type Provider struct {
	// Name is the id used in model ids ("<provider>/<model>") and delivery.provider.
	Name string
	// Dialect is DialectOpenAI, DialectOpenAIChat or DialectAnthropic.
	Dialect string
	// BaseURL ends with the API's version segment, e.g. https://api.openai.com/v1.
	BaseURL *url.URL
	// Endpoints are the base URLs of every endpoint of the provider; the
	// reverse proxy balances across them. The first is BaseURL.
	Endpoints []*url.URL
	// APIKey is the upstream credential. It is sent upstream and nowhere else.
	APIKey string
	// Headers are extra request headers sent to this provider.
	Headers map[string]string
}

// Speaks reports whether the provider serves the given client dialect natively.
func (p *Provider) Speaks(d translate.Dialect) bool {
	switch p.Dialect {
	case DialectOpenAI:
		return d == translate.Chat || d == translate.Responses || d == translate.Embeddings
	case DialectOpenAIChat:
		return d == translate.Chat || d == translate.Embeddings
	case DialectAnthropic:
		return d == translate.Messages
	}
	return false
}

// UpstreamDialect is the dialect the gateway speaks to this provider for a
// client of dialect d: d itself where the provider speaks it, else the
// provider's completion dialect.
func (p *Provider) UpstreamDialect(d translate.Dialect) translate.Dialect {
	if p.Speaks(d) {
		return d
	}
	if p.Dialect == DialectAnthropic {
		return translate.Messages
	}
	return translate.Chat
}

// Price is a price in USD per one million tokens, by token class.
//
// Input tokens come in classes that providers price apart: tokens read from
// the provider's prompt cache, tokens written to it (for its default
// duration, and for one hour where the provider offers that), and the rest.
// A nil class price means the provider API's published ratio to the input
// price (ClassRatios), filled in when the catalog is built; a Price that
// never went through a catalog bills a nil class at the input price.
type Price struct {
	// Input is the price of one million input (prompt) tokens that are not
	// read from or written to a prompt cache.
	Input float64
	// Output is the price of one million output (completion) tokens.
	Output float64
	// CacheRead is the price of one million input tokens read from the
	// provider's prompt cache (OpenAI: cached input).
	CacheRead *float64
	// CacheWrite is the price of one million input tokens written to the
	// prompt cache for its default duration (Anthropic: 5 minutes).
	CacheWrite *float64
	// CacheWrite1h is the price of one million input tokens written to a
	// one-hour prompt cache (Anthropic's extended cache duration).
	CacheWrite1h *float64
}

// ClassRatios are a provider API's published prices of the cache classes,
// as multiples of its input price: Anthropic bills cache reads at 0.1x,
// 5-minute cache writes at 1.25x and one-hour writes at 2x; OpenAI bills
// cached input at 0.5x and charges nothing extra to write the cache.
func ClassRatios(dialect string) (read, write, write1h float64) {
	if dialect == DialectAnthropic {
		return 0.1, 1.25, 2
	}
	return 0.5, 1, 1
}

// WithClassDefaults fills the class prices p leaves nil with the ratios of
// the provider dialect's API (ClassRatios) to p's input price.
func (p Price) WithClassDefaults(dialect string) Price {
	read, write, write1h := ClassRatios(dialect)
	for _, f := range [...]struct {
		dst   **float64
		ratio float64
	}{{&p.CacheRead, read}, {&p.CacheWrite, write}, {&p.CacheWrite1h, write1h}} {
		if *f.dst == nil {
			v := p.Input * f.ratio
			*f.dst = &v
		}
	}
	return p
}

// class is a class price, or the input price where p leaves it nil.
func (p Price) class(v *float64) float64 {
	if v == nil {
		return p.Input
	}
	return *v
}

// MaxInput is the highest price p puts on an input token of any class:
// what a worst case must assume before the usage is known.
func (p Price) MaxInput() float64 {
	return max(p.Input, p.class(p.CacheRead), p.class(p.CacheWrite), p.class(p.CacheWrite1h))
}

// Cost is the USD cost of the given usage at this price, each input token
// at its class's price; nil when the usage is unknown (the gateway never
// guesses).
func (p Price) Cost(u translate.Usage) *float64 {
	if !u.Known {
		return nil
	}
	read, write, write1h := u.CacheClasses()
	plain := max(u.InputTokens-read-write-write1h, 0)
	c := (float64(plain)*p.Input + float64(read)*p.class(p.CacheRead) + float64(write)*p.class(p.CacheWrite) +
		float64(write1h)*p.class(p.CacheWrite1h) + float64(u.OutputTokens)*p.Output) / 1e6
	// Whole pico-dollars: float noise must not show up on a bill.
	c = math.Round(c*1e12) / 1e12
	return &c
}

// valid reports whether every price is finite and not negative: bills are
// promised never to exceed direct, which a negative price would break.
func (p Price) valid() bool {
	ok := func(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
	for _, v := range [...]*float64{p.CacheRead, p.CacheWrite, p.CacheWrite1h} {
		if v != nil && !ok(*v) {
			return false
		}
	}
	return ok(p.Input) && ok(p.Output)
}

// String shows the price as the Caddyfile writes it.
func (p Price) String() string {
	s := fmt.Sprintf("%v %v", p.Input, p.Output)
	for _, c := range [...]struct {
		name string
		v    *float64
	}{{"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}, {"cache_write_1h", p.CacheWrite1h}} {
		if c.v != nil {
			s += fmt.Sprintf(" %s %v", c.name, *c.v)
		}
	}
	return s
}

// Path is one way to serve a model.
type Path struct {
	// Provider is the name of the provider serving this path.
	Provider string
	// UpstreamModel is the model name sent to the provider.
	UpstreamModel string
	// Quantization is "full", "q8" or "q4".
	Quantization string
	// ServedBy is "provider" or "router_network".
	ServedBy string
	// Tiers are the tiers this path serves.
	Tiers []string
	// Cost is what the upstream charges the gateway for this path.
	Cost Price
}

// Serves reports whether the path serves the tier.
func (p *Path) Serves(tier string) bool { return slices.Contains(p.Tiers, tier) }

// Model is a model id clients may ask for.
type Model struct {
	// ID is the client-facing id, "<provider>/<model>".
	ID string
	// OwnedBy is reported by GET /models.
	OwnedBy string
	// Description is reported by GET /models.
	Description string
	// Embedding marks an embeddings model.
	Embedding bool
	// OpenWeight marks a model whose weights are public: only those may have
	// partner-network paths.
	OpenWeight bool
	// Price is the direct (list) price the caller is billed for a pinned call.
	Price Price
	// MaxOutputTokens is the most output tokens the model gives one call;
	// 0 means DefaultMaxOutputTokens. Credit is reserved for this many
	// when a call does not set its own limit.
	MaxOutputTokens int64
	// Paths are tried in order; later ones are fallbacks.
	Paths []Path
}

// Catalog is the set of providers and models a configuration declares.
//
// A catalog is built once per configuration (NewCatalog, then AddRouter) and
// only read afterwards, so lookups need no lock.
type Catalog struct {
	// Created is the unix time reported as every model's "created".
	Created int64

	providers map[string]*Provider
	models    map[string]*Model
	routers   map[string]*Router
	// order lists models and router entries as GET /models shows them.
	order       []*Model
	routerOrder []*Router
}

// ErrUnknownModel is returned for a model id the catalog does not list.
var ErrUnknownModel = errors.New("unknown model")

// NewCatalog checks providers and models for consistency and indexes them.
// Providers in disabled are switched off (their credential or address is not
// configured): their paths are dropped, and a model left with no path is not
// listed.
func NewCatalog(providers []*Provider, models []*Model, disabled map[string]bool, created int64) (*Catalog, error) {
	c := &Catalog{providers: map[string]*Provider{}, models: map[string]*Model{}, routers: map[string]*Router{}, Created: created}
	for _, p := range providers {
		if p.Name == "" || strings.Contains(p.Name, "/") {
			return nil, fmt.Errorf("provider name %q: must be non-empty and contain no '/'", p.Name)
		}
		if _, dup := c.providers[p.Name]; dup {
			return nil, fmt.Errorf("provider %q declared twice", p.Name)
		}
		switch p.Dialect {
		case DialectOpenAI, DialectOpenAIChat, DialectAnthropic:
		default:
			return nil, fmt.Errorf("provider %q: unknown dialect %q (want openai, openai_chat or anthropic)", p.Name, p.Dialect)
		}
		c.providers[p.Name] = p
	}
	for _, m := range models {
		if _, dup := c.models[m.ID]; dup {
			return nil, fmt.Errorf("model %q declared twice", m.ID)
		}
		prov, _, ok := strings.Cut(m.ID, "/")
		if !ok || prov == "" {
			return nil, fmt.Errorf("model %q: id must have the form <provider>/<model>", m.ID)
		}
		if !m.Price.valid() {
			return nil, fmt.Errorf("model %q: price %v per 1M tokens (want finite and not negative)", m.ID, m.Price)
		}
		price := m.Price
		if pr, ok := c.providers[prov]; ok {
			price = price.WithClassDefaults(pr.Dialect)
		} else if len(m.Paths) > 0 {
			if pr, ok := c.providers[m.Paths[0].Provider]; ok {
				price = price.WithClassDefaults(pr.Dialect)
			}
		}
		var paths []Path
		for i, p := range m.Paths {
			if disabled[p.Provider] {
				continue
			}
			if _, ok := c.providers[p.Provider]; !ok {
				return nil, fmt.Errorf("model %q path %d: unknown provider %q", m.ID, i, p.Provider)
			}
			if !slices.Contains(Quantizations, p.Quantization) {
				return nil, fmt.Errorf("model %q path %d: quantization %q (want full, q8 or q4)", m.ID, i, p.Quantization)
			}
			if !p.Cost.valid() {
				return nil, fmt.Errorf("model %q path %d: cost %v per 1M tokens (want finite and not negative)", m.ID, i, p.Cost)
			}
			p.Cost = p.Cost.WithClassDefaults(c.providers[p.Provider].Dialect)
			if p.ServedBy != "provider" && p.ServedBy != "router_network" {
				return nil, fmt.Errorf("model %q path %d: served_by %q (want provider or router_network)", m.ID, i, p.ServedBy)
			}
			if p.ServedBy == "router_network" && !m.OpenWeight {
				return nil, fmt.Errorf("model %q path %d: partner-network paths exist only for open-weight models", m.ID, i)
			}
			for _, t := range p.Tiers {
				if !slices.Contains(Tiers, t) {
					return nil, fmt.Errorf("model %q path %d: unknown tier %q", m.ID, i, t)
				}
			}
			paths = append(paths, p)
		}
		if len(m.Paths) == 0 {
			return nil, fmt.Errorf("model %q: no path", m.ID)
		}
		if len(paths) == 0 {
			continue
		}
		mm := *m
		mm.Price = price
		mm.Paths = paths
		c.models[m.ID] = &mm
		c.order = append(c.order, &mm)
	}
	return c, nil
}

// Provider returns the named provider.
func (c *Catalog) Provider(name string) (*Provider, bool) {
	p, ok := c.providers[name]
	return p, ok
}

// Providers returns every enabled provider.
func (c *Catalog) Providers() []*Provider {
	out := make([]*Provider, 0, len(c.providers))
	for _, p := range c.providers {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Provider) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Model returns the model with the given id. Router ids are not models: see
// Router.
func (c *Catalog) Model(id string) (*Model, error) {
	m, ok := c.models[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownModel, id)
	}
	return m, nil
}

// Models lists the catalog's models in declaration order, followed by the
// routers' entries (owned_by "router", no paths), as GET /models lists them.
func (c *Catalog) Models() []*Model { return c.order }
