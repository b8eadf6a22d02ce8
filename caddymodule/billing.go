package caddymodule

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
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

// balanceTTL is how long a read balance answers the credit check. Charges
// are always exact on the ledger; only the moment a depleted org is turned
// away may lag by this much, in exchange for no store read on most calls.
const balanceTTL = 250 * time.Millisecond

type cachedBalance struct {
	usd float64
	at  time.Time
}

// balances caches recent balance reads by org id.
var balances sync.Map

// balance is the org's balance, read from the store at most every
// balanceTTL.
func (a *App) balance(st *reliability.BoltStore, orgID string) (float64, error) {
	now := time.Now()
	if v, ok := balances.Load(orgID); ok {
		if cb := v.(cachedBalance); now.Sub(cb.at) < balanceTTL {
			return cb.usd, nil
		}
	}
	bal, err := st.Balance(orgID)
	if err != nil {
		return 0, err
	}
	balances.Store(orgID, cachedBalance{usd: bal, at: now})
	return bal, nil
}

// topupLocks serialises auto top-up per org, so that concurrent calls
// under the threshold credit the org once.
var topupLocks sync.Map // org id -> *sync.Mutex

// checkCredit refuses a paid call when the org has no credit left, after
// an auto top-up where the org has one configured. Free models (price 0)
// never need credit.
func (a *App) checkCredit(st *reliability.BoltStore, p *principal, route routing.Route) *apiError {
	price := route.Model.Price
	if route.Reference != nil {
		price = route.Reference.Price
	}
	if price.Input == 0 && price.Output == 0 {
		return nil
	}
	bal, err := a.balance(st, p.orgID)
	if err != nil {
		a.logger.Error("reading balance", zap.Error(err))
		return errInternal("could not read the balance")
	}
	oc := a.orgConfig[p.orgName]
	if oc != nil && oc.TopupAmount > 0 && bal < oc.TopupThreshold {
		bal = a.autoTopup(st, p, oc)
	}
	if bal > 0 {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "insufficient_quota",
		message: "the organisation has no credit left; top up to continue"}
}

// autoTopup credits the org's configured amount when its balance is still
// under the threshold, and returns the balance after.
func (a *App) autoTopup(st *reliability.BoltStore, p *principal, oc *OrgConfig) float64 {
	mu, _ := topupLocks.LoadOrStore(p.orgID, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	bal, err := st.Balance(p.orgID)
	if err != nil || bal >= oc.TopupThreshold {
		return bal
	}
	if _, err := st.Topup(p.orgID, oc.TopupAmount, "auto top-up"); err != nil {
		a.logger.Error("auto top-up", zap.String("org", p.orgName), zap.Error(err))
		return bal
	}
	a.logger.Info("auto top-up", zap.String("org", p.orgName), zap.Float64("amount_usd", oc.TopupAmount))
	nb, _ := st.Balance(p.orgID)
	balances.Store(p.orgID, cachedBalance{usd: nb, at: time.Now()})
	return nb
}
