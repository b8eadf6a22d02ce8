package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// topupState is one org's auto top-up at run time: the settings in force
// (the store's, set at run time, else the configuration's) and whether the
// top-up is armed. It fires when the credit left falls under the threshold
// while armed, and re-arms only once the credit is seen at or above the
// threshold again: one top-up per crossing, however many calls are refused
// meanwhile.
type topupState struct {
	mu     sync.Mutex
	loaded bool
	// set is the run-time setting; nil means the configuration's.
	set      *reliability.AutoTopup
	disarmed bool
}

// lockedTopup returns the org's top-up state locked, its run-time
// settings loaded from the store the first time; the caller unlocks it.
func (a *App) lockedTopup(st *reliability.BoltStore, orgID string) *topupState {
	v, ok := a.rt.topups.Load(orgID)
	if !ok {
		v, _ = a.rt.topups.LoadOrStore(orgID, new(topupState))
	}
	ts := v.(*topupState)
	ts.mu.Lock()
	if !ts.loaded {
		if s, err := st.OrgSettingsOf(orgID); err == nil {
			ts.set, ts.loaded = s.AutoTopup, true
		} else {
			a.logger.Error("reading org settings", zap.String("org", orgID), zap.Error(err))
		}
	}
	return ts
}

// settings is the auto top-up in force for the org named orgName: the
// run-time one, else the configuration's; a zero AmountUSD means none.
// Call with ts.mu held.
func (ts *topupState) settings(a *App, orgName string) reliability.AutoTopup {
	if ts.set != nil {
		return *ts.set
	}
	if oc := a.orgConfig[orgName]; oc != nil {
		return reliability.AutoTopup{ThresholdUSD: oc.TopupThreshold, AmountUSD: oc.TopupAmount}
	}
	return reliability.AutoTopup{}
}

// autoTopupSettings is the org's auto top-up in force.
func (a *App) autoTopupSettings(st *reliability.BoltStore, p *principal) reliability.AutoTopup {
	ts := a.lockedTopup(st, p.orgID)
	defer ts.mu.Unlock()
	return ts.settings(a, p.orgName)
}

// topUpIfLow credits the org's auto top-up amount when its credit (what
// is left once calls in flight, the current one included, hold theirs:
// the figure the reservation just read, so no second store read is made)
// has crossed under the threshold since the last top-up. It reports
// whether it made one.
func (a *App) topUpIfLow(st *reliability.BoltStore, p *principal, credit float64) bool {
	ts := a.lockedTopup(st, p.orgID)
	defer ts.mu.Unlock()
	t := ts.settings(a, p.orgName)
	if t.AmountUSD <= 0 {
		return false
	}
	switch {
	case credit >= t.ThresholdUSD:
		ts.disarmed = false
		return false
	case ts.disarmed:
		return false
	}
	if _, err := st.Topup(p.orgID, t.AmountUSD, "auto top-up"); err != nil {
		a.logger.Error("auto top-up", zap.String("org", p.orgName), zap.Error(err))
		return false
	}
	ts.disarmed = true
	a.logger.Info("auto top-up", zap.String("org", p.orgName), zap.Float64("amount_usd", t.AmountUSD),
		zap.Float64("credit_before_usd", credit))
	return true
}

// setAutoTopup stores an org's auto top-up and puts it in force at once.
func (a *App) setAutoTopup(st *reliability.BoltStore, orgID string, t reliability.AutoTopup) error {
	if _, err := st.SetAutoTopup(orgID, t); err != nil {
		return err
	}
	ts := a.lockedTopup(st, orgID)
	ts.set, ts.loaded, ts.disarmed = &t, true, false
	ts.mu.Unlock()
	return nil
}

// balanceBody is the answer of GET /balance.
type balanceBody struct {
	Object   string `json:"object"`
	OrgID    string `json:"org_id"`
	Currency string `json:"currency"`
	// BalanceUSD is the credit with every charge made so far.
	BalanceUSD float64 `json:"balance_usd"`
	// ReservedUSD is held by calls in flight.
	ReservedUSD float64 `json:"reserved_usd"`
	// AvailableUSD is what a new call may use: balance less reserved.
	AvailableUSD float64 `json:"available_usd"`
	// OverdraftUSD is how far below zero the balance may go.
	OverdraftUSD float64 `json:"overdraft_usd"`
	// AutoTopup is the auto top-up in force, or null.
	AutoTopup *reliability.AutoTopup `json:"auto_topup"`
}

// serveMoney answers GET /balance, GET /ledger and GET /usage for the
// authenticated org.
func (h *Reliability) serveMoney(w http.ResponseWriter, r *http.Request, st *reliability.BoltStore, p *principal, what string) *apiError {
	if what == "balance/auto_topup" {
		return h.setOrgAutoTopup(w, r, st, p)
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		return &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed", message: "use GET"}
	}
	switch what {
	case "balance":
		avail, reserved, err := st.Available(p.orgID)
		if err != nil {
			return h.internal("reading balance", err)
		}
		b := balanceBody{Object: "balance", OrgID: p.orgID, Currency: "usd", BalanceUSD: avail + reserved,
			ReservedUSD: reserved, AvailableUSD: avail}
		if oc := h.app.orgConfig[p.orgName]; oc != nil {
			b.OverdraftUSD = oc.OverdraftUSD
		}
		if t := h.app.autoTopupSettings(st, p); t.AmountUSD > 0 {
			b.AutoTopup = &t
		}
		return h.writeJSONValue(w, http.StatusOK, b)
	case "ledger":
		q := r.URL.Query()
		pq, aerr := pageQuery(q.Get("limit"), q.Get("cursor"))
		if aerr != nil {
			return aerr
		}
		page, err := st.LedgerEntries(p.orgID, pq)
		if errors.Is(err, reliability.ErrBadCursor) {
			return errInvalid("cursor", "cursor is not one this API returned")
		}
		if err != nil {
			return h.internal("listing ledger", err)
		}
		return h.writeJSONValue(w, http.StatusOK, listBody(page))
	default: // usage
		from, to, aerr := usageRange(r, time.Now())
		if aerr != nil {
			return aerr
		}
		rep, err := st.Usage(p.orgID, from, to)
		if err != nil {
			return h.internal("reading usage", err)
		}
		return h.writeJSONValue(w, http.StatusOK, rep)
	}
}

// usageRange reads GET /usage's from and to (RFC 3339 times, or dates
// YYYY-MM-DD meaning midnight UTC; to is exclusive). The default is the 30
// days up to now; the range is at most reliability.MaxUsageRange.
func usageRange(r *http.Request, now time.Time) (from, to time.Time, aerr *apiError) {
	parse := func(name string, def time.Time) (time.Time, *apiError) {
		v := r.URL.Query().Get(name)
		if v == "" {
			return def, nil
		}
		for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
			if t, err := time.Parse(layout, v); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, errInvalid(name, fmt.Sprintf("%s must be an RFC 3339 time or a date YYYY-MM-DD", name))
	}
	if to, aerr = parse("to", now.UTC()); aerr != nil {
		return
	}
	if from, aerr = parse("from", to.Add(-30*24*time.Hour)); aerr != nil {
		return
	}
	switch {
	case !to.After(from):
		aerr = errInvalid("from", "from must be before to")
	case to.Sub(from) > reliability.MaxUsageRange:
		aerr = errInvalid("from", fmt.Sprintf("the range may cover at most %d days", int(reliability.MaxUsageRange.Hours()/24)))
	}
	return
}

// isMoneyPath reports whether the path after the prefix is one of the
// org's money endpoints, and which.
func isMoneyPath(rest string) (string, bool) {
	switch what := strings.Trim(rest, "/"); what {
	case "balance", "ledger", "usage", "balance/auto_topup":
		return what, true
	}
	return "", false
}

// setOrgAutoTopup answers POST /balance/auto_topup: an admin key of the
// org sets the org's auto top-up ({"threshold_usd":..,"amount_usd":..};
// an amount of 0 turns it off) and gets the balance back.
func (h *Reliability) setOrgAutoTopup(w http.ResponseWriter, r *http.Request, st *reliability.BoltStore, p *principal) *apiError {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed", message: "use POST"}
	}
	if !p.admin {
		return errForbidden("only an admin key of the organisation may change its auto top-up")
	}
	var req struct {
		ThresholdUSD *float64 `json:"threshold_usd"`
		AmountUSD    *float64 `json:"amount_usd"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<12)).Decode(&req); err != nil {
		return errInvalid("", "the body must be a JSON object with threshold_usd and amount_usd")
	}
	switch {
	case req.ThresholdUSD == nil:
		return errInvalid("threshold_usd", "threshold_usd is required")
	case req.AmountUSD == nil:
		return errInvalid("amount_usd", "amount_usd is required")
	}
	t := reliability.AutoTopup{ThresholdUSD: *req.ThresholdUSD, AmountUSD: *req.AmountUSD}
	if err := t.Validate(); err != nil {
		param := "threshold_usd"
		if (reliability.AutoTopup{AmountUSD: t.AmountUSD}).Validate() != nil {
			param = "amount_usd"
		}
		return errInvalid(param, err.Error())
	}
	if err := h.app.setAutoTopup(st, p.orgID, t); err != nil {
		return h.internal("setting auto top-up", err)
	}
	h.logger.Info("auto top-up set by the org", zap.String("org", p.orgName), zap.String("key", p.keyID),
		zap.Float64("threshold_usd", t.ThresholdUSD), zap.Float64("amount_usd", t.AmountUSD))
	r.Method = http.MethodGet
	return h.serveMoney(w, r, st, p, "balance")
}
