package caddymodule

import (
	"encoding/hex"
	"math"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/modelgate/gateway/reliability"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("llm", parseGlobal)
	httpcaddyfile.RegisterHandlerDirective("llm_gateway", parseGatewayDirective)
	httpcaddyfile.RegisterHandlerDirective("llm_reliability", parseReliabilityDirective)
	httpcaddyfile.RegisterHandlerDirective("llm_demo_upstream", parseDemoDirective)
	httpcaddyfile.RegisterDirectiveOrder("llm_gateway", httpcaddyfile.Before, "reverse_proxy")
	httpcaddyfile.RegisterDirectiveOrder("llm_reliability", httpcaddyfile.Before, "reverse_proxy")
	httpcaddyfile.RegisterDirectiveOrder("llm_demo_upstream", httpcaddyfile.Before, "reverse_proxy")
}

// parseGlobal parses the `llm` global option into the llm app:
//
//	llm {
//		store <path>
//		key_prefix <prefix>
//		max_body_size <size>
//		commit_batch <records>
//		commit_delay <duration>
//		router <id> {
//			reference <model_id>
//			pool <model_id...>
//			explore <share>
//			description <text>
//		}
//		pricing {
//			routed_share <0..0.95>
//			tier_multiplier <tier> <0..1>
//		}
//		rate_limit {
//			requests_per_minute <n>
//			tokens_per_minute <n>
//		}
//		cache {
//			max_size <size>
//			ttl <duration>
//		}
//		sales_email <address>
//		smtp <host:port> {
//			from <address>
//			username <user>
//			password {env.VAR}|{file./path}
//			password_env <VAR>
//		}
//		limits {
//			embeddings_body_size <size>
//			api_body_size <size>
//			max_json_depth <n>
//			max_json_members <n>
//			max_messages <n>
//			max_tools <n>
//			max_header_size <size>
//			max_concurrent_calls <n>
//			body_read_timeout <duration>
//		}
//		retention {
//			max_payload_size <size>|off
//			payload_ttl <duration>|off
//			prune_interval <duration>
//			prune_batch <n>
//			max_page_size <size>
//		}
//		redact_headers <header...>
//		reload_drain <duration>|off
//		fair_use {
//			max_refunds <n>
//			max_share <0..1>
//			max_value_share <0..1>
//			max_refund_usd <usd>
//			allowance_usd <usd>
//			eval_max_value_share <0..1>
//			eval_max_refund_usd <usd>
//			gate_min_scored <n>
//			gate_fail_share <0..1>
//		}
//		org <name> {
//			plan free|paid
//			key <api_key...>           (kept as its SHA-256: see key_hash)
//			key_hash <hex_sha256...>
//			models <model_id...>
//			auto_topup <threshold_usd> <amount_usd>
//			overdraft <usd>
//			rate_limit {
//				requests_per_minute <n>
//				tokens_per_minute <n>
//			}
//			cache
//		}
//		provider <name> {
//			dialect openai|openai_chat|anthropic
//			base_url <url>
//			base_url_env <VAR>
//			api_key {env.VAR}|{file./path}
//			api_key_env <VAR>
//			endpoints <url...>
//			header <name> <value>
//			dial_timeout <duration>
//			response_header_timeout <duration>
//			stream_idle_timeout <duration>
//			lb_retries <n>
//			insecure_skip_verify
//			compression on|off
//			max_concurrency <n>
//		}
//		model <provider>/<model> {
//			owned_by <name>
//			description <text>
//			embedding
//			open_weight
//			price <input_per_1M> <output_per_1M>
//			cache_read_price <per_1M>
//			cache_write_price <per_1M>
//			cache_write_1h_price <per_1M>
//			max_output_tokens <n>
//			path <provider> [<upstream_model>] {
//				quantization full|q8|q4
//				served_by provider|router_network
//				tiers <tier...>
//				price <input_per_1M> <output_per_1M>
//				cache_read_price <per_1M>
//				cache_write_price <per_1M>
//				cache_write_1h_price <per_1M>
//			}
//		}
//	}
func parseGlobal(d *caddyfile.Dispenser, _ any) (any, error) {
	app := new(App)
	d.Next() // the option name
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "store":
			if !d.AllArgs(&app.Store) {
				return nil, d.ArgErr()
			}
		case "key_prefix":
			if !d.AllArgs(&app.KeyPrefix) {
				return nil, d.ArgErr()
			}
		case "max_body_size":
			var s string
			if !d.AllArgs(&s) {
				return nil, d.ArgErr()
			}
			n, err := humanize.ParseBytes(s)
			if err != nil {
				return nil, d.Errf("max_body_size %q: %v", s, err)
			}
			app.MaxBodyBytes = int64(n)
		case "commit_batch":
			n, err := intArg(d)
			if err != nil {
				return nil, err
			}
			app.CommitBatch = n
		case "commit_delay":
			dur, err := durationArg(d)
			if err != nil {
				return nil, err
			}
			app.CommitDelay = dur
		case "org":
			oc, err := parseOrg(d)
			if err != nil {
				return nil, err
			}
			app.Orgs = append(app.Orgs, oc)
		case "provider":
			pc, err := parseProvider(d)
			if err != nil {
				return nil, err
			}
			app.Providers = append(app.Providers, pc)
		case "model":
			mc, err := parseModel(d)
			if err != nil {
				return nil, err
			}
			app.Models = append(app.Models, mc)
		case "router":
			rc, err := parseRouter(d)
			if err != nil {
				return nil, err
			}
			app.Routers = append(app.Routers, rc)
		case "pricing":
			pc, err := parsePricing(d)
			if err != nil {
				return nil, err
			}
			app.Pricing = pc
		case "rate_limit":
			rl, err := parseRateLimit(d)
			if err != nil {
				return nil, err
			}
			app.RateLimit = rl
		case "cache":
			cc := new(CacheConfig)
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			for nesting := d.Nesting(); d.NextBlock(nesting); {
				switch d.Val() {
				case "max_size":
					var v string
					if !d.AllArgs(&v) {
						return nil, d.ArgErr()
					}
					n, err := humanize.ParseBytes(v)
					if err != nil {
						return nil, d.Errf("max_size %q: %v", v, err)
					}
					cc.MaxSize = int64(n)
				case "ttl":
					dur, err := durationArg(d)
					if err != nil {
						return nil, err
					}
					cc.TTL = dur
				default:
					return nil, d.Errf("unrecognized cache subdirective %q", d.Val())
				}
			}
			app.Cache = cc
		case "sales_email":
			if !d.AllArgs(&app.SalesEmail) {
				return nil, d.ArgErr()
			}
		case "smtp":
			sc, err := parseSMTP(d)
			if err != nil {
				return nil, err
			}
			app.SMTP = sc
		case "fair_use":
			fu, err := parseFairUse(d)
			if err != nil {
				return nil, err
			}
			app.FairUse = fu
		case "limits":
			lc, err := parseLimits(d)
			if err != nil {
				return nil, err
			}
			app.Limits = lc
		case "retention":
			rc, err := parseRetention(d)
			if err != nil {
				return nil, err
			}
			app.Retention = rc
		case "redact_headers":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			app.RedactHeaders = append(app.RedactHeaders, args...)
		case "reload_drain":
			dur, err := durationOrOff(d)
			if err != nil {
				return nil, err
			}
			app.ReloadDrain = dur
		default:
			return nil, d.Errf("unrecognized subdirective %q", d.Val())
		}
	}
	return httpcaddyfile.App{Name: "llm", Value: caddyconfig.JSON(app, nil)}, nil
}

// parseFairUse parses the fair_use block: the caps on automatic refunds
// per org per rolling 24 hours and the unreliable-gate rule. Shares are
// from 0 to 1, amounts USD up to 1000000 (allowance_usd may be negative: no
// allowance), counts non-negative; 0 means the default.
func parseFairUse(d *caddyfile.Dispenser) (*FairUseConfig, error) {
	fu := new(FairUseConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	share := func(name string, dst *float64) error {
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return d.Errf("%s wants a number from 0 to 1, got %q", name, v)
		}
		*dst = f
		return nil
	}
	usd := func(name string, dst *float64, negative bool) error {
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f <= 1e6 && (f >= 0 || negative && f >= -1e6)) {
			return d.Errf("%s wants a USD amount from 0 to 1000000, got %q", name, v)
		}
		*dst = f
		return nil
	}
	count := func(dst *int) error {
		n, err := intArg(d)
		if err != nil {
			return err
		}
		*dst = n
		return nil
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch name := d.Val(); name {
		case "max_refunds":
			err = count(&fu.MaxRefunds)
		case "max_share":
			err = share(name, &fu.MaxShare)
		case "max_value_share":
			err = share(name, &fu.MaxValueShare)
		case "max_refund_usd":
			err = usd(name, &fu.MaxRefundUSD, false)
		case "allowance_usd":
			err = usd(name, &fu.AllowanceUSD, true)
		case "eval_max_value_share":
			err = share(name, &fu.EvalMaxValueShare)
		case "eval_max_refund_usd":
			err = usd(name, &fu.EvalMaxRefundUSD, false)
		case "gate_min_scored":
			err = count(&fu.GateMinScored)
		case "gate_fail_share":
			err = share(name, &fu.GateFailShare)
		default:
			err = d.Errf("unrecognized fair_use subdirective %q", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return fu, nil
}

func parseRouter(d *caddyfile.Dispenser) (RouterConfig, error) {
	var rc RouterConfig
	if !d.NextArg() {
		return rc, d.ArgErr()
	}
	rc.ID = d.Val()
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "reference":
			if !d.AllArgs(&rc.Reference) {
				return rc, d.ArgErr()
			}
		case "pool":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return rc, d.ArgErr()
			}
			rc.Pool = append(rc.Pool, args...)
		case "explore":
			var v string
			if !d.AllArgs(&v) {
				return rc, d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f > 1 {
				return rc, d.Errf("explore wants a share up to 1, got %q", v)
			}
			rc.Explore = f
		case "description":
			if !d.AllArgs(&rc.Description) {
				return rc, d.ArgErr()
			}
		default:
			return rc, d.Errf("unrecognized router subdirective %q", d.Val())
		}
	}
	if rc.Reference == "" {
		return rc, d.Errf("router %q needs a reference model", rc.ID)
	}
	return rc, nil
}

func parsePricing(d *caddyfile.Dispenser) (*PricingConfig, error) {
	pc := new(PricingConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "routed_share":
			var v string
			if !d.AllArgs(&v) {
				return nil, d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f > 0.95 {
				return nil, d.Errf("routed_share wants a number above 0 and at most 0.95, got %q", v)
			}
			pc.RoutedShare = f
		case "tier_multiplier":
			var tier, v string
			if !d.AllArgs(&tier, &v) {
				return nil, d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return nil, d.Errf("tier_multiplier wants a number from 0 to 1, got %q", v)
			}
			if pc.TierMultipliers == nil {
				pc.TierMultipliers = map[string]float64{}
			}
			pc.TierMultipliers[tier] = f
		default:
			return nil, d.Errf("unrecognized pricing subdirective %q", d.Val())
		}
	}
	return pc, nil
}

func parseRateLimit(d *caddyfile.Dispenser) (*RateLimitConfig, error) {
	rl := new(RateLimitConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		n, err := 0, error(nil)
		switch d.Val() {
		case "requests_per_minute":
			n, err = intArg(d)
			rl.RequestsPerMinute = n
		case "tokens_per_minute":
			n, err = intArg(d)
			rl.TokensPerMinute = n
		default:
			return nil, d.Errf("unrecognized rate_limit subdirective %q", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return rl, nil
}

func parseSMTP(d *caddyfile.Dispenser) (*SMTPConfig, error) {
	sc := new(SMTPConfig)
	if !d.AllArgs(&sc.Addr) {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var dst *string
		switch d.Val() {
		case "from":
			dst = &sc.From
		case "username":
			dst = &sc.Username
		case "password":
			dst = &sc.Password
		case "password_env":
			dst = &sc.PasswordEnv
		default:
			return nil, d.Errf("unrecognized smtp subdirective %q", d.Val())
		}
		if !d.AllArgs(dst) {
			return nil, d.ArgErr()
		}
		if dst == &sc.Password && !isSecretRef(sc.Password) {
			return nil, d.Err("smtp password must be read from the environment or a file ({env.VAR}, {file./path}, or password_env VAR): " +
				"a password written in the Caddyfile would be shown by the admin API and kept in the autosave")
		}
	}
	if sc.From == "" {
		return nil, d.Err("smtp needs a from address")
	}
	return sc, nil
}

func parseOrg(d *caddyfile.Dispenser) (OrgConfig, error) {
	var oc OrgConfig
	if !d.NextArg() {
		return oc, d.ArgErr()
	}
	oc.Name = d.Val()
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "plan":
			if !d.AllArgs(&oc.Plan) {
				return oc, d.ArgErr()
			}
		case "key":
			// Only the key's hash reaches the JSON config, which Caddy's
			// admin API serves and autosaves.
			args := d.RemainingArgs()
			if len(args) == 0 {
				return oc, d.ArgErr()
			}
			for _, k := range args {
				if !validKeyFormat(k) {
					return oc, d.Errf("org %q: a key does not have the form <prefix>_live_<random>", oc.Name)
				}
				h := reliability.HashKey(k)
				oc.KeyHashes = append(oc.KeyHashes, hex.EncodeToString(h[:]))
			}
		case "key_hash":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return oc, d.ArgErr()
			}
			oc.KeyHashes = append(oc.KeyHashes, args...)
		case "models":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return oc, d.ArgErr()
			}
			oc.Models = append(oc.Models, args...)
		case "auto_topup":
			var th, am string
			if !d.AllArgs(&th, &am) {
				return oc, d.ArgErr()
			}
			t, err1 := strconv.ParseFloat(th, 64)
			a, err2 := strconv.ParseFloat(am, 64)
			if err1 != nil || err2 != nil || t < 0 || a <= 0 {
				return oc, d.Errf("auto_topup wants <threshold_usd> <amount_usd>, got %q %q", th, am)
			}
			oc.TopupThreshold, oc.TopupAmount = t, a
		case "rate_limit":
			rl, err := parseRateLimit(d)
			if err != nil {
				return oc, err
			}
			oc.RateLimit = rl
		case "cache":
			if d.NextArg() {
				return oc, d.ArgErr()
			}
			oc.Cache = true
		case "overdraft":
			var v string
			if !d.AllArgs(&v) {
				return oc, d.ArgErr()
			}
			usd, err := strconv.ParseFloat(v, 64)
			if err != nil || !(usd >= 0 && usd <= 1e6) {
				return oc, d.Errf("overdraft wants a USD amount between 0 and 1000000, got %q", v)
			}
			oc.OverdraftUSD = usd
		default:
			return oc, d.Errf("unrecognized org subdirective %q", d.Val())
		}
	}
	return oc, nil
}

func parseProvider(d *caddyfile.Dispenser) (ProviderConfig, error) {
	var pc ProviderConfig
	if !d.NextArg() {
		return pc, d.ArgErr()
	}
	pc.Name = d.Val()
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch d.Val() {
		case "dialect":
			if !d.AllArgs(&pc.Dialect) {
				return pc, d.ArgErr()
			}
		case "base_url":
			if !d.AllArgs(&pc.BaseURL) {
				return pc, d.ArgErr()
			}
		case "base_url_env":
			if !d.AllArgs(&pc.BaseURLEnv) {
				return pc, d.ArgErr()
			}
		case "api_key":
			if !d.AllArgs(&pc.APIKey) {
				return pc, d.ArgErr()
			}
			if !isSecretRef(pc.APIKey) {
				return pc, d.Errf("provider %q: api_key must be read from the environment or a file ({env.VAR}, {file./path}, or api_key_env VAR): "+
					"a key written in the Caddyfile would be shown by the admin API and kept in the autosave", pc.Name)
			}
		case "api_key_env":
			if !d.AllArgs(&pc.APIKeyEnv) {
				return pc, d.ArgErr()
			}
		case "endpoints":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return pc, d.ArgErr()
			}
			pc.Endpoints = append(pc.Endpoints, args...)
		case "header":
			var k, v string
			if !d.AllArgs(&k, &v) {
				return pc, d.ArgErr()
			}
			if pc.Headers == nil {
				pc.Headers = map[string]string{}
			}
			pc.Headers[k] = v
		case "dial_timeout":
			pc.DialTimeout, err = durationArg(d)
		case "response_header_timeout":
			pc.ResponseHeaderTimeout, err = durationArg(d)
		case "stream_idle_timeout":
			pc.StreamIdleTimeout, err = durationArg(d)
		case "lb_retries":
			pc.LBRetries, err = intArg(d)
		case "max_concurrency":
			pc.MaxConcurrency, err = intArg(d)
		case "compression":
			var on bool
			on, err = onOffArg(d)
			pc.Compression = &on
		case "insecure_skip_verify":
			if d.NextArg() {
				return pc, d.ArgErr()
			}
			pc.InsecureSkipVerify = true
		default:
			return pc, d.Errf("unrecognized provider subdirective %q", d.Val())
		}
		if err != nil {
			return pc, err
		}
	}
	return pc, nil
}

func parseModel(d *caddyfile.Dispenser) (ModelConfig, error) {
	var mc ModelConfig
	if !d.NextArg() {
		return mc, d.ArgErr()
	}
	mc.ID = d.Val()
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "owned_by":
			if !d.AllArgs(&mc.OwnedBy) {
				return mc, d.ArgErr()
			}
		case "description":
			if !d.AllArgs(&mc.Description) {
				return mc, d.ArgErr()
			}
		case "embedding":
			mc.Embedding = true
		case "open_weight":
			mc.OpenWeight = true
		case "price":
			in, out, err := priceArgs(d)
			if err != nil {
				return mc, err
			}
			mc.InputPrice, mc.OutputPrice = in, out
		case "cache_read_price", "cache_write_price", "cache_write_1h_price":
			if err := classPriceArg(d, &mc.ClassPrices); err != nil {
				return mc, err
			}
		case "max_output_tokens":
			var v string
			if !d.AllArgs(&v) {
				return mc, d.ArgErr()
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 || n > 100_000_000 {
				return mc, d.Errf("max_output_tokens wants a positive number of tokens, got %q", v)
			}
			mc.MaxOutputTokens = n
		case "path":
			pc, err := parsePath(d)
			if err != nil {
				return mc, err
			}
			mc.Paths = append(mc.Paths, pc)
		default:
			return mc, d.Errf("unrecognized model subdirective %q", d.Val())
		}
	}
	return mc, nil
}

func parsePath(d *caddyfile.Dispenser) (PathConfig, error) {
	var pc PathConfig
	args := d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 {
		return pc, d.ArgErr()
	}
	pc.Provider = args[0]
	if len(args) == 2 {
		pc.UpstreamModel = args[1]
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "quantization":
			if !d.AllArgs(&pc.Quantization) {
				return pc, d.ArgErr()
			}
		case "served_by":
			if !d.AllArgs(&pc.ServedBy) {
				return pc, d.ArgErr()
			}
		case "tiers":
			pc.Tiers = d.RemainingArgs()
			if len(pc.Tiers) == 0 {
				return pc, d.ArgErr()
			}
		case "price":
			in, out, err := priceArgs(d)
			if err != nil {
				return pc, err
			}
			pc.InputPrice, pc.OutputPrice = &in, &out
		case "cache_read_price", "cache_write_price", "cache_write_1h_price":
			if err := classPriceArg(d, &pc.ClassPrices); err != nil {
				return pc, err
			}
		default:
			return pc, d.Errf("unrecognized path subdirective %q", d.Val())
		}
	}
	return pc, nil
}

// classPriceArg reads the price of the token class the current
// subdirective names into cp.
func classPriceArg(d *caddyfile.Dispenser, cp *ClassPrices) error {
	name := d.Val()
	var a string
	if !d.AllArgs(&a) {
		return d.ArgErr()
	}
	v, err := strconv.ParseFloat(a, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 1) {
		return d.Errf("%s wants a non-negative number (USD per 1M tokens), got %q", name, a)
	}
	switch name {
	case "cache_read_price":
		cp.CacheRead = &v
	case "cache_write_price":
		cp.CacheWrite = &v
	default:
		cp.CacheWrite1h = &v
	}
	return nil
}

func priceArgs(d *caddyfile.Dispenser) (float64, float64, error) {
	var a, b string
	if !d.AllArgs(&a, &b) {
		return 0, 0, d.ArgErr()
	}
	in, err1 := strconv.ParseFloat(a, 64)
	out, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || in < 0 || out < 0 {
		return 0, 0, d.Errf("price wants two non-negative numbers (USD per 1M input and output tokens), got %q %q", a, b)
	}
	return in, out, nil
}

func intArg(d *caddyfile.Dispenser) (int, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, d.Errf("%s wants a non-negative integer, got %q", d.Val(), s)
	}
	return n, nil
}

// onOffArg reads a single "on" or "off".
func onOffArg(d *caddyfile.Dispenser) (bool, error) {
	var s string
	if !d.AllArgs(&s) {
		return false, d.ArgErr()
	}
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, d.Errf("%s wants on or off, got %q", d.Val(), s)
}

// durationOrOff reads a duration, or "off" as -1.
func durationOrOff(d *caddyfile.Dispenser) (caddy.Duration, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	if s == "off" {
		return -1, nil
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.Errf("%s wants a positive duration or off, got %q", d.Val(), s)
	}
	return caddy.Duration(dur), nil
}

// sizeArg reads a size such as 8MiB, 64KB or 1000000.
func sizeArg(d *caddyfile.Dispenser) (int64, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<40 {
		return 0, d.Errf("%s wants a size such as 8MiB, got %q", d.Val(), s)
	}
	return int64(n), nil
}

// parseLimits parses the limits block (see LimitsConfig).
func parseLimits(d *caddyfile.Dispenser) (*LimitsConfig, error) {
	lc := new(LimitsConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		var n int64
		switch d.Val() {
		case "embeddings_body_size":
			lc.EmbeddingsBodySize, err = sizeArg(d)
		case "api_body_size":
			lc.APIBodySize, err = sizeArg(d)
		case "max_header_size":
			n, err = sizeArg(d)
			lc.MaxHeaderSize = int(n)
		case "max_json_depth":
			lc.MaxJSONDepth, err = intArg(d)
		case "max_json_members":
			lc.MaxJSONMembers, err = intArg(d)
		case "max_messages":
			lc.MaxMessages, err = intArg(d)
		case "max_tools":
			lc.MaxTools, err = intArg(d)
		case "max_concurrent_calls":
			lc.MaxConcurrentCalls, err = intArg(d)
		case "body_read_timeout":
			lc.BodyReadTimeout, err = durationArg(d)
		default:
			err = d.Errf("unrecognized limits subdirective %q", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return lc, nil
}

// parseRetention parses the retention block (see RetentionConfig).
func parseRetention(d *caddyfile.Dispenser) (*RetentionConfig, error) {
	rc := new(RetentionConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch d.Val() {
		case "max_payload_size":
			var v string
			if !d.AllArgs(&v) {
				return nil, d.ArgErr()
			}
			if v == "off" {
				rc.MaxPayloadSize = -1
				continue
			}
			n, perr := humanize.ParseBytes(v)
			if perr != nil || n == 0 || n > 1<<30 {
				return nil, d.Errf("max_payload_size wants a size up to 1GiB or off, got %q", v)
			}
			rc.MaxPayloadSize = int64(n)
		case "payload_ttl":
			rc.PayloadTTL, err = durationOrOff(d)
		case "prune_interval":
			rc.PruneInterval, err = durationArg(d)
		case "prune_batch":
			rc.PruneBatch, err = intArg(d)
		case "max_page_size":
			rc.MaxPageSize, err = sizeArg(d)
		default:
			err = d.Errf("unrecognized retention subdirective %q", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return rc, nil
}

func durationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil {
		return 0, d.Errf("duration %q: %v", s, err)
	}
	return caddy.Duration(dur), nil
}

// parseGatewayDirective parses:
//
//	llm_gateway [<prefix>]
func parseGatewayDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	g := new(Gateway)
	h.Next()
	if h.NextArg() {
		g.Prefix = h.Val()
	}
	if h.NextArg() || h.NextBlock(0) {
		return nil, h.ArgErr()
	}
	return g, nil
}

// parseReliabilityDirective parses:
//
//	llm_reliability [<prefix>]
func parseReliabilityDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	r := new(Reliability)
	h.Next()
	if h.NextArg() {
		r.Prefix = h.Val()
	}
	if h.NextArg() || h.NextBlock(0) {
		return nil, h.ArgErr()
	}
	return r, nil
}

// parseDemoDirective parses:
//
//	llm_demo_upstream {
//		strict
//		api_key <key>
//		fail_status <status>
//		latency <duration>
//	}
func parseDemoDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	du := new(DemoUpstream)
	h.Next()
	if h.NextArg() {
		return nil, h.ArgErr()
	}
	for h.NextBlock(0) {
		switch h.Val() {
		case "strict":
			du.Strict = true
		case "api_key":
			if !h.AllArgs(&du.APIKey) {
				return nil, h.ArgErr()
			}
		case "fail_status":
			n, err := intArg(h.Dispenser)
			if err != nil {
				return nil, err
			}
			du.FailStatus = n
		case "latency":
			dur, err := durationArg(h.Dispenser)
			if err != nil {
				return nil, err
			}
			du.Latency = dur
		default:
			return nil, h.Errf("unrecognized subdirective %q", h.Val())
		}
	}
	return du, nil
}
