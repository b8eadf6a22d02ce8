package caddymodule

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/gateway/routing"
)

// OrgConfig declares an organisation and the API keys that act for it.
type OrgConfig struct {
	// Name identifies the org; it is created in the store on first start.
	Name string `json:"name"`
	// Plan is "free" (default) or "paid".
	Plan string `json:"plan,omitempty"`
	// Keys are API keys of the form <prefix>_live_<random>, in plain text.
	// They are hashed when the config loads and only the hashes are kept;
	// prefer KeyHashes for real deployments so that the config holds no secret.
	Keys []string `json:"keys,omitempty"`
	// KeyHashes are hex SHA-256 digests of API keys.
	KeyHashes []string `json:"key_hashes,omitempty"`
	// Models, when set, limits the org to these model ids; a call to another
	// model is refused with 403 and GET /models lists only these.
	Models []string `json:"models,omitempty"`
	// TopupThreshold and TopupAmount turn on auto top-up: when the balance
	// is under the threshold (USD) at a call, TopupAmount is credited.
	TopupThreshold float64 `json:"topup_threshold,omitempty"`
	// TopupAmount: see TopupThreshold.
	TopupAmount float64 `json:"topup_amount,omitempty"`
	// RateLimit limits each of the org's keys; default the app's.
	RateLimit *RateLimitConfig `json:"rate_limit,omitempty"`
	// Cache serves the org's eligible calls from the response cache.
	Cache bool `json:"cache,omitempty"`
	// OverdraftUSD lets the org's balance go this far below zero: the
	// credit check reserves each call's worst-case cost against the
	// balance down to -OverdraftUSD. Default 0: no call starts that could
	// take the balance below zero.
	OverdraftUSD float64 `json:"overdraft_usd,omitempty"`
}

// RateLimitConfig limits one API key.
type RateLimitConfig struct {
	// RequestsPerMinute; 0 is unlimited.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// TokensPerMinute (input plus output); 0 is unlimited.
	TokensPerMinute int `json:"tokens_per_minute,omitempty"`
}

// RouterConfig declares a router model such as router-1.
type RouterConfig struct {
	// ID is the model id clients ask for, e.g. "router-1" or "router-embed-1".
	ID string `json:"id"`
	// Reference is the model the router stands in for: routed calls are
	// billed below its direct price.
	Reference string `json:"reference"`
	// Pool are the other models the router may serve a call with.
	Pool []string `json:"pool,omitempty"`
	// Explore is the share of gated calls that try the next cheaper
	// unproven path (default 0.05; negative turns it off).
	Explore float64 `json:"explore,omitempty"`
	// Description is listed by GET /models.
	Description string `json:"description,omitempty"`
}

// PricingConfig sets how calls are billed.
type PricingConfig struct {
	// RoutedShare is the share of the reference's direct price a routed
	// call is billed at, at most 0.95 (the default).
	RoutedShare float64 `json:"routed_share,omitempty"`
	// TierMultipliers discount tiers; default realtime 1, standard 1,
	// batch 0.5. Never above 1.
	TierMultipliers map[string]float64 `json:"tier_multipliers,omitempty"`
}

// CacheConfig bounds the response cache.
type CacheConfig struct {
	// MaxSize is the most bytes of cached bodies. Default 64 MiB.
	MaxSize int64 `json:"max_size,omitempty"`
	// TTL is how long an entry may be served. Default 10m.
	TTL caddy.Duration `json:"ttl,omitempty"`
}

// ProviderConfig declares an upstream service.
type ProviderConfig struct {
	// Name is the provider id, the first part of "<provider>/<model>".
	Name string `json:"name"`
	// Dialect is "openai" (chat, responses and embeddings), "openai_chat"
	// (OpenAI-compatible servers: chat and embeddings) or "anthropic".
	Dialect string `json:"dialect"`
	// BaseURL ends with the API's version segment, e.g. https://api.openai.com/v1.
	BaseURL string `json:"base_url,omitempty"`
	// BaseURLEnv names an environment variable holding the base URL; when it
	// is unset or empty the provider is switched off.
	BaseURLEnv string `json:"base_url_env,omitempty"`
	// APIKey is the upstream credential. It is never logged or recorded.
	// It may be a placeholder read when the config loads, {env.VAR} or
	// {file./path/to/key}, which keeps the key itself out of the config
	// that the admin API serves and Caddy autosaves; a key written here in
	// plain text is shown there (the Caddyfile refuses one).
	APIKey string `json:"api_key,omitempty"`
	// APIKeyEnv names an environment variable holding the credential; when it
	// is unset or empty the provider is switched off.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Endpoints are more base URLs serving the same API (same path); the
	// reverse proxy balances across them and BaseURL.
	Endpoints []string `json:"endpoints,omitempty"`
	// Headers are extra request headers for this provider. They are added
	// as the request leaves, like the credential, so no log line of the
	// reverse proxy holds them; the values of those whose names say they
	// hold a credential or an account id (key, token, secret, auth,
	// organization, project...) are scrubbed from all log text too. Values
	// may be {env.VAR} or {file./path} placeholders, read when the config
	// loads.
	Headers map[string]string `json:"headers,omitempty"`
	// DialTimeout bounds connecting to the upstream. Default 10s.
	DialTimeout caddy.Duration `json:"dial_timeout,omitempty"`
	// ResponseHeaderTimeout bounds the wait for the upstream's response
	// headers; past it the next path is tried. Default 5m.
	ResponseHeaderTimeout caddy.Duration `json:"response_header_timeout,omitempty"`
	// StreamIdleTimeout bounds the quiet between the bytes of a streamed
	// answer, from its headers on: an upstream that sends nothing for this
	// long is cut off. Before anything reached the client the next path is
	// tried; after, the client's stream ends with its dialect's error
	// event and the call is recorded as failed. Default 2m.
	StreamIdleTimeout caddy.Duration `json:"stream_idle_timeout,omitempty"`
	// LBRetries is how many other endpoints of this provider the reverse
	// proxy tries on a dial error before the gateway moves to the next path.
	LBRetries int `json:"lb_retries,omitempty"`
	// InsecureSkipVerify turns off TLS certificate checks (test upstreams only).
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// Compression asks the upstream for gzip-compressed answers, which the
	// gateway decodes before it reads them. Default: on, except when every
	// endpoint of the provider is a loopback address (a model server on the
	// same host), where compressing costs CPU on both ends and saves nothing.
	Compression *bool `json:"compression,omitempty"`
	// MaxConcurrency bounds the calls in flight to this provider; waiting
	// calls are admitted realtime first, then standard, then batch. 0 is
	// unlimited.
	MaxConcurrency int `json:"max_concurrency,omitempty"`
}

// PathConfig is one way to serve a model.
type PathConfig struct {
	// Provider names the provider.
	Provider string `json:"provider"`
	// UpstreamModel is the model name sent upstream.
	UpstreamModel string `json:"upstream_model"`
	// Quantization is full (default), q8 or q4.
	Quantization string `json:"quantization,omitempty"`
	// ServedBy is provider (default) or router_network.
	ServedBy string `json:"served_by,omitempty"`
	// Tiers served; default all three.
	Tiers []string `json:"tiers,omitempty"`
	// InputPrice and OutputPrice are what the upstream charges, USD per 1M
	// tokens; default the model's price.
	InputPrice *float64 `json:"input_price,omitempty"`
	// OutputPrice: see InputPrice.
	OutputPrice *float64 `json:"output_price,omitempty"`
	// ClassPrices are what the upstream charges per token class; a class
	// left out takes the provider API's published ratio to this path's
	// input price.
	ClassPrices ClassPrices `json:"class_prices,omitzero"`
}

// ClassPrices are prices of input token classes, USD per 1M tokens. A nil
// class takes the published ratio of the provider's API to the input price
// (Anthropic: cache read 0.1x, 5-minute cache write 1.25x, one-hour cache
// write 2x; OpenAI: cached input 0.5x, cache writes 1x).
type ClassPrices struct {
	// CacheRead is the price of input tokens read from the prompt cache.
	CacheRead *float64 `json:"cache_read,omitempty"`
	// CacheWrite is the price of input tokens written to the prompt cache
	// for its default duration (Anthropic: 5 minutes).
	CacheWrite *float64 `json:"cache_write,omitempty"`
	// CacheWrite1h is the price of input tokens written to a one-hour
	// prompt cache.
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"`
}

// apply sets the classes cp declares on p.
func (cp ClassPrices) apply(p routing.Price) routing.Price {
	p.CacheRead, p.CacheWrite, p.CacheWrite1h = cp.CacheRead, cp.CacheWrite, cp.CacheWrite1h
	return p
}

// ModelConfig declares a model clients may ask for.
type ModelConfig struct {
	// ID is "<provider>/<model>".
	ID string `json:"id"`
	// OwnedBy is listed by GET /models; default the provider part of the id.
	OwnedBy string `json:"owned_by,omitempty"`
	// Description is listed by GET /models.
	Description string `json:"description,omitempty"`
	// Embedding marks an embeddings model.
	Embedding bool `json:"embedding,omitempty"`
	// OpenWeight marks an open-weight model (may have partner-network paths).
	OpenWeight bool `json:"open_weight,omitempty"`
	// InputPrice is the direct price billed per 1M input tokens, USD.
	InputPrice float64 `json:"input_price,omitempty"`
	// OutputPrice is the direct price billed per 1M output tokens, USD.
	OutputPrice float64 `json:"output_price,omitempty"`
	// ClassPrices are the direct prices of the input token classes (cache
	// reads and writes); a class left out takes the published ratio of the
	// API of the model's provider to InputPrice.
	ClassPrices ClassPrices `json:"class_prices,omitzero"`
	// MaxOutputTokens is the most output tokens the model gives one call.
	// A call that sets no max_tokens reserves credit for this many; default
	// routing.DefaultMaxOutputTokens.
	MaxOutputTokens int64 `json:"max_output_tokens,omitempty"`
	// Paths are tried in order. Default: one path on the id's provider with
	// the id's model name.
	Paths []PathConfig `json:"paths,omitempty"`
}

// buildCatalog turns the config into a routing catalog. Providers whose
// base URL or credential comes from an unset environment variable are
// switched off, with their names returned for the log.
func buildCatalog(provs []ProviderConfig, models []ModelConfig, routers []RouterConfig, created int64) (*routing.Catalog, []string, error) {
	disabled := map[string]bool{}
	var off []string
	var ps []*routing.Provider
	for _, pc := range provs {
		base, key := pc.BaseURL, pc.APIKey
		if pc.BaseURLEnv != "" {
			base = os.Getenv(pc.BaseURLEnv)
		}
		if pc.APIKeyEnv != "" {
			key = os.Getenv(pc.APIKeyEnv)
		}
		keyRef := pc.APIKeyEnv != "" || isSecretRef(key)
		key = resolveSecret(key)
		if base == "" || (keyRef && key == "") {
			disabled[pc.Name] = true
			off = append(off, pc.Name)
			continue
		}
		p := &routing.Provider{Name: pc.Name, Dialect: pc.Dialect, APIKey: key, Headers: resolveHeaders(pc.Headers)}
		for i, raw := range append([]string{base}, pc.Endpoints...) {
			u, err := parseBaseURL(raw)
			if err != nil {
				return nil, nil, fmt.Errorf("provider %q endpoint %d: %w", pc.Name, i, err)
			}
			if i > 0 && strings.TrimRight(u.Path, "/") != strings.TrimRight(p.BaseURL.Path, "/") {
				return nil, nil, fmt.Errorf("provider %q endpoint %q: path must equal the base URL's %q", pc.Name, raw, p.BaseURL.Path)
			}
			if i > 0 && u.Scheme != p.BaseURL.Scheme {
				return nil, nil, fmt.Errorf("provider %q endpoint %q: scheme must equal the base URL's", pc.Name, raw)
			}
			if i == 0 {
				p.BaseURL = u
			}
			p.Endpoints = append(p.Endpoints, u)
		}
		ps = append(ps, p)
	}
	var ms []*routing.Model
	for _, mc := range models {
		prov, name, _ := strings.Cut(mc.ID, "/")
		m := &routing.Model{
			ID: mc.ID, OwnedBy: mc.OwnedBy, Description: mc.Description,
			Embedding: mc.Embedding, OpenWeight: mc.OpenWeight,
			Price:           mc.ClassPrices.apply(routing.Price{Input: mc.InputPrice, Output: mc.OutputPrice}),
			MaxOutputTokens: mc.MaxOutputTokens,
		}
		if m.OwnedBy == "" {
			m.OwnedBy = prov
		}
		paths := mc.Paths
		if len(paths) == 0 {
			paths = []PathConfig{{Provider: prov, UpstreamModel: name}}
		}
		for _, pc := range paths {
			p := routing.Path{
				Provider: pc.Provider, UpstreamModel: pc.UpstreamModel,
				Quantization: pc.Quantization, ServedBy: pc.ServedBy, Tiers: pc.Tiers,
				Cost: m.Price,
			}
			if p.UpstreamModel == "" {
				p.UpstreamModel = name
			}
			if p.Quantization == "" {
				p.Quantization = "full"
			}
			if p.ServedBy == "" {
				p.ServedBy = "provider"
			}
			if len(p.Tiers) == 0 {
				p.Tiers = routing.Tiers
			}
			if pc.InputPrice != nil {
				// Classes the path does not price follow its own input
				// price, not the model's.
				p.Cost = routing.Price{Input: *pc.InputPrice, Output: p.Cost.Output}
			}
			if pc.OutputPrice != nil {
				p.Cost.Output = *pc.OutputPrice
			}
			if pc.ClassPrices != (ClassPrices{}) {
				p.Cost = pc.ClassPrices.apply(p.Cost)
			}
			m.Paths = append(m.Paths, p)
		}
		ms = append(ms, m)
	}
	cat, err := routing.NewCatalog(ps, ms, disabled, created)
	if err != nil {
		return nil, nil, err
	}
	for _, rc := range routers {
		ref, err := cat.Model(rc.Reference)
		if err != nil {
			if errors.Is(err, routing.ErrUnknownModel) && anyDisabled(rc, models, disabled) {
				off = append(off, "router "+rc.ID)
				continue
			}
			return nil, nil, fmt.Errorf("router %q: %w", rc.ID, err)
		}
		pool := make([]string, 0, len(rc.Pool))
		for _, id := range rc.Pool {
			if _, err := cat.Model(id); err == nil {
				pool = append(pool, id)
			} else if !anyDisabled(RouterConfig{Reference: id}, models, disabled) {
				return nil, nil, fmt.Errorf("router %q pool: %w", rc.ID, err)
			}
		}
		err = cat.AddRouter(routing.RouterConfig{ID: rc.ID, Embedding: ref.Embedding, Reference: rc.Reference, Pool: pool,
			Explore: rc.Explore, Description: rc.Description})
		if err != nil {
			return nil, nil, fmt.Errorf("router %q: %w", rc.ID, err)
		}
	}
	return cat, off, nil
}

// anyDisabled reports whether the router's reference belongs to a
// switched-off provider, so the router is switched off with it.
func anyDisabled(rc RouterConfig, models []ModelConfig, disabled map[string]bool) bool {
	for _, m := range models {
		if m.ID != rc.Reference {
			continue
		}
		prov, _, _ := strings.Cut(m.ID, "/")
		if disabled[prov] {
			return true
		}
		for _, p := range m.Paths {
			if !disabled[p.Provider] {
				return false
			}
		}
		return len(m.Paths) > 0
	}
	return false
}

// isSecretRef reports whether a configured secret is read at load time
// from the environment ({env.VAR}) or a file ({file./path}) rather than
// written in the config, where the admin API and the autosave would show it.
func isSecretRef(s string) bool {
	return strings.Contains(s, "{env.") || strings.Contains(s, "{file.")
}

// resolveSecret replaces the {env.*} and {file.*} placeholders of a
// configured secret with their values.
func resolveSecret(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return strings.TrimSpace(caddy.NewReplacer().ReplaceKnown(s, ""))
}

// resolveHeaders is h with its values' placeholders resolved.
func resolveHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return h
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = resolveSecret(v)
	}
	return out
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("base URL %q: no host", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}
