package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/gateway/reliability"
)

// The gateway's access log fields. A call exposes placeholders for the
// access log (`log_append <field> {http.llm.<name>}`):
//
//	org, org_id          the org's name and id
//	key_id, key_hint     the API key's id and hint ("mg_live_…ab12"), never the key
//	call_id              the call's id (the completion id; GET /calls/{id})
//	provider, model      the provider that served the call, the model asked for
//	upstream_model       the model the upstream says answered
//	tier                 the tier the call was served at
//	outcome              success, cache_hit, upstream_error, ... (as in the metrics)
//	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
//	cost_usd             the bill ("" when unknown)
//	fallbacks            the paths moved past before the one that answered
//
// They are answered from the call when the log entry is written, so a
// call pays for none of them unless it is logged, and they hold for every
// outcome (streamed, failed, cached). provider, model, tier and cost_usd
// of a whole answer are also set as values by setPlaceholders, which take
// precedence with the same values.

// placeholderPrefix is the namespace of the gateway's placeholders.
const placeholderPrefix = "http.llm."

// keyMarker separates an API key's prefix from its secret.
const keyMarker = "_live_"

// logged is what the call's log fields need from its record, copied when
// the record is made (the record itself goes to the store's writer).
type logged struct {
	recorded                bool
	outcome                 outcome
	provider, upstreamModel string
	tier                    string
	input, output           int
	cacheRead, cacheWrite   int
	cost                    *float64
	fallbacks               int
}

// keepLogged copies what the log fields need from the call's record.
func (c *call) keepLogged(rec *reliability.Call, o outcome) {
	c.logged = logged{
		recorded: true, outcome: o, provider: rec.Provider, upstreamModel: rec.ModelVersion, tier: rec.Tier,
		input: rec.PromptTokens, output: rec.CompletionTokens,
		cacheRead: rec.CacheReadTokens, cacheWrite: rec.CacheWriteTokens + rec.CacheWrite1hTokens,
		cost: rec.CostUSD, fallbacks: max(len(rec.Attempts)-1, 0),
	}
}

// exposePlaceholders makes the call's placeholders known to r's replacer.
func (c *call) exposePlaceholders(r *http.Request) {
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(c.placeholder)
	}
}

// placeholder answers the gateway's placeholders from the call.
func (c *call) placeholder(key string) (any, bool) {
	name, ok := strings.CutPrefix(key, placeholderPrefix)
	if !ok {
		return nil, false
	}
	switch name {
	case "org":
		return c.p.orgName, true
	case "org_id":
		return c.p.orgID, true
	case "key_id":
		return c.p.keyID, true
	case "key_hint":
		// "mg_live_…ab12": the ellipsis keeps it from reading as a key,
		// to people and to the llm_redact encoder alike.
		return strings.Replace(c.p.hint, keyMarker, keyMarker+"…", 1), true
	case "call_id":
		return c.id, true
	case "model":
		return c.req.Model, true
	}
	l := &c.logged
	if !l.recorded {
		return nil, false
	}
	switch name {
	case "provider":
		return l.provider, true
	case "upstream_model":
		return l.upstreamModel, true
	case "tier":
		return l.tier, true
	case "outcome":
		return l.outcome.String(), true
	case "input_tokens":
		return l.input, true
	case "output_tokens":
		return l.output, true
	case "cache_read_tokens":
		return l.cacheRead, true
	case "cache_write_tokens":
		return l.cacheWrite, true
	case "cost_usd":
		if l.cost == nil {
			return "", true
		}
		return *l.cost, true
	case "fallbacks":
		return l.fallbacks, true
	}
	return nil, false
}
