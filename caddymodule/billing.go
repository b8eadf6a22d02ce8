package caddymodule

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// rateLimitOf is the limit that applies to the principal's keys.
func (a *App) rateLimitOf(p *principal) *RateLimitConfig {
	if oc := a.orgConfig[p.orgName]; oc != nil && oc.RateLimit != nil {
		return oc.RateLimit
	}
	return a.RateLimit
}

// checkRateLimit refuses a call past the key's requests or tokens per
// minute with 429 rate_limit_error and Retry-After.
func (a *App) checkRateLimit(w http.ResponseWriter, p *principal) *apiError {
	rl := a.rateLimitOf(p)
	if rl == nil || (rl.RequestsPerMinute == 0 && rl.TokensPerMinute == 0) || a.rt.shared == nil {
		return nil
	}
	ok, wait := a.rt.shared.limiter.AllowRequest(p.keyID, rl.RequestsPerMinute, rl.TokensPerMinute, time.Now())
	if ok {
		return nil
	}
	observeRejection("rate_limit_exceeded")
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	return &apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded",
		message: fmt.Sprintf("rate limit of this key reached; retry after %d s", max(secs, 1))}
}

// chargeTokens counts a served call's tokens against the key's limit.
func (a *App) chargeTokens(p *principal, tokens int) {
	rl := a.rateLimitOf(p)
	if rl == nil || rl.TokensPerMinute == 0 || a.rt.shared == nil || tokens <= 0 {
		return
	}
	a.rt.shared.limiter.ChargeTokens(p.keyID, rl.TokensPerMinute, tokens, time.Now())
}

// reserveCredit holds the call's worst-case cost against the org's credit
// before anything is sent upstream: the input estimated from the body and
// the output the request (or the model) allows, at the price the call is
// billed at. The call is refused with 429 insufficient_quota when the
// balance, less what calls in flight hold, would cross the org's floor
// (zero, or its configured overdraft). An org whose credit falls under its
// auto top-up threshold is topped up (and a refused call tried once more).
// Free models (price 0) need no credit.
// A key with a budget holds the same worst case against it first (429
// budget_exceeded past it, see reserveKeyBudget); the call's reservation
// then releases both.
func (a *App) reserveCredit(st *reliability.BoltStore, c *call) *apiError {
	route := c.route
	price := route.Model.Price
	if route.Reference != nil {
		price = route.Reference.Price
	}
	if price.Input == 0 && price.Output == 0 {
		return nil
	}
	p := c.p
	in := routing.EstimateInputTokens(len(c.body))
	var out int64
	if c.d != translate.Embeddings {
		out = route.MaxOutput(c.maxTokens)
	}
	need := a.pricing.WorstCase(route, in, out)
	var overdraft float64
	oc := a.orgConfig[p.orgName]
	if oc != nil {
		overdraft = oc.OverdraftUSD
	}
	keyHold, aerr := a.reserveKeyBudget(st, c, need)
	if aerr != nil {
		if aerr.status == http.StatusTooManyRequests {
			observeRejection(aerr.code)
		}
		return aerr
	}
	res, err := st.Reserve(p.orgID, need, overdraft)
	var ce *reliability.CreditError
	// Auto top-up looks at the credit the reservation read: left after
	// it, or what there was when it was refused, in which case the call
	// is tried once more on the topped-up balance.
	switch {
	case err == nil:
		a.topUpIfLow(st, p, res.LeftUSD())
	case errors.As(err, &ce) && a.topUpIfLow(st, p, ce.CreditUSD):
		res, err = st.Reserve(p.orgID, need, overdraft)
	}
	if err != nil {
		keyHold.Release()
	}
	switch {
	case err == nil:
		res.Link(keyHold)
		c.reservation = res
		return nil
	case errors.As(err, &ce):
		observeRejection("insufficient_quota")
		return &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "insufficient_quota",
			message: fmt.Sprintf("not enough credit for this call: it may cost up to %s USD (about %d input tokens and up to %d output tokens at its price) and the organisation has %s USD available; top up, or lower max_tokens",
				strconv.FormatFloat(ce.NeedUSD, 'f', 6, 64), in, out, strconv.FormatFloat(ce.AvailableUSD, 'f', 6, 64))}
	default:
		a.logger.Error("reserving credit", zap.Error(err))
		return errInternal("could not read the balance")
	}
}
