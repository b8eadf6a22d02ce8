package caddymodule

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// cachedKey is a stored key's principal as authenticate caches it, with
// the store's KeysVersion read before the key was: an entry of an older
// version is read again.
type cachedKey struct {
	p       *principal
	version uint64
}

// configKeyPrefix starts the id of a key declared in the config.
const configKeyPrefix = "key_cfg_"

// configKeyID is the id of the config key with hash h: not secret, stable
// across restarts, and distinct from the ids of stored keys.
func configKeyID(h [32]byte) string { return configKeyPrefix + hex.EncodeToString(h[:6]) }

// isConfigKeyID reports whether id names a config key.
func isConfigKeyID(id string) bool { return strings.HasPrefix(id, configKeyPrefix) }

// keyRefusedError is a key that exists but may not be used: revoked or
// expired. It is errBadKey for callers that only need that; its message
// says why, for the 401.
type keyRefusedError struct{ msg string }

func (e *keyRefusedError) Error() string { return e.msg }
func (e *keyRefusedError) Unwrap() error { return errBadKey }

// errKeyRevoked is the refusal of a revoked key.
var errKeyRevoked = &keyRefusedError{msg: "this API key has been revoked"}

// unauthorizedMessage is the message of the 401 that answers an
// authentication error wrapping errBadKey.
func unauthorizedMessage(err error) string {
	var kr *keyRefusedError
	if errors.As(err, &kr) {
		return kr.msg
	}
	return "invalid API key"
}

// admitKey checks the key's expiry at now and notes the use.
func admitKey(st *reliability.BoltStore, p *principal, now time.Time) (*principal, error) {
	if !p.expiresAt.IsZero() && !now.Before(p.expiresAt) {
		return nil, &keyRefusedError{msg: "this API key expired at " + p.expiresAt.UTC().Format(time.RFC3339)}
	}
	st.TouchKey(p.keyID, now)
	return p, nil
}

// principalForKey is who acts through the stored key rec of org: the
// org's models narrowed to the key's, its budget, role and expiry.
func (a *App) principalForKey(org reliability.Org, rec reliability.APIKey) *principal {
	p := &principal{orgID: org.ID, orgName: org.Name, plan: org.Plan, keyID: rec.ID, hint: rec.Hint,
		allowed: narrowModels(a.orgModels[org.Name], rec.Models), admin: rec.Admin, budget: rec.Budget}
	if rec.ExpiresAt != nil {
		p.expiresAt = *rec.ExpiresAt
	}
	return p
}

// narrowModels is the models a key may call: the org's (nil: all) within
// the key's own list (empty: no narrowing).
func narrowModels(org map[string]bool, key []string) map[string]bool {
	if len(key) == 0 {
		return org
	}
	out := make(map[string]bool, len(key))
	for _, m := range key {
		if org == nil || org[m] {
			out[m] = true
		}
	}
	return out
}

// reserveKeyBudget holds the call's worst case, need USD, against the
// budget of the key that makes it; nil when the key has none. A call past
// the budget is refused with 429 insufficient_quota, code budget_exceeded,
// naming the budget, what is spent and what the call needs; Retry-After
// says when the period resets.
func (a *App) reserveKeyBudget(st *reliability.BoltStore, c *call, need float64) (*reliability.KeyReservation, *apiError) {
	p := c.p
	if p.budget == nil {
		return nil, nil
	}
	res, err := st.ReserveKeyBudget(p.keyID, *p.budget, need, c.start)
	var be *reliability.BudgetError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &be):
		wait := max(int(time.Until(be.ResetsAt).Seconds())+1, 1)
		return nil, &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "budget_exceeded",
			retryAfter: strconv.Itoa(wait),
			message: fmt.Sprintf("this API key's budget of %s USD per %s (UTC) is used up: %s USD spent and %s USD held by calls in flight, and this call may cost up to %s USD; the budget resets at %s, or lower max_tokens",
				keyUSD(be.LimitUSD), be.Period, keyUSD(be.SpentUSD), keyUSD(be.ReservedUSD), keyUSD(be.NeedUSD), be.ResetsAt.Format(time.RFC3339))}
	default:
		a.logger.Error("reserving key budget", zap.String("key", p.keyID), zap.Error(err))
		return nil, errInternal("could not read the key's budget")
	}
}

// keyUSD formats an amount of USD for a message.
func keyUSD(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
