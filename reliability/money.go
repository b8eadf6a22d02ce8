package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
)

// LedgerCredit is a kind of ledger entry: credit an operator added by hand
// (admin API, `caddy llm credit`); its amount is positive.
const LedgerCredit = "credit"

// bucketOrgSettings maps org id to the OrgSettings changed at run time.
var bucketOrgSettings = []byte("org_settings")

// AutoTopup is an org's auto top-up: when the credit left after what calls
// in flight hold falls under ThresholdUSD, AmountUSD is credited, once per
// crossing of the threshold.
type AutoTopup struct {
	// ThresholdUSD is the credit under which the top-up is made.
	ThresholdUSD float64 `json:"threshold_usd"`
	// AmountUSD is what each top-up credits; 0 turns auto top-up off.
	AmountUSD float64 `json:"amount_usd"`
}

// OrgSettings are an org's settings changed at run time; they take the
// place of the configuration's.
type OrgSettings struct {
	// AutoTopup, when set, replaces the configured auto top-up.
	AutoTopup *AutoTopup `json:"auto_topup,omitempty"`
}

// Validate checks the amounts.
func (t AutoTopup) Validate() error {
	for _, v := range []float64{t.ThresholdUSD, t.AmountUSD} {
		if math.IsNaN(v) || v < 0 || v > maxLedgerUSD {
			return fmt.Errorf("auto top-up amounts must be between 0 and %g USD, got %v", float64(maxLedgerUSD), v)
		}
	}
	return nil
}

// SetAutoTopup stores the org's auto top-up, replacing the configured one.
func (s *BoltStore) SetAutoTopup(orgID string, t AutoTopup) (OrgSettings, error) {
	if err := t.Validate(); err != nil {
		return OrgSettings{}, fmt.Errorf("set auto top-up of org %s: %w", orgID, err)
	}
	var out OrgSettings
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		b := tx.Bucket(bucketOrgSettings)
		if raw := b.Get([]byte(orgID)); raw != nil {
			if err := json.Unmarshal(raw, &out); err != nil {
				return fmt.Errorf("decode settings: %w", err)
			}
		}
		out.AutoTopup = &t
		raw, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return b.Put([]byte(orgID), raw)
	})
	if err != nil {
		return OrgSettings{}, fmt.Errorf("set auto top-up of org %s: %w", orgID, err)
	}
	return out, nil
}

// OrgSettingsOf returns the org's run-time settings; the zero value when
// none were ever set.
func (s *BoltStore) OrgSettingsOf(orgID string) (OrgSettings, error) {
	var out OrgSettings
	err := s.db.View(func(tx *bolt.Tx) error {
		if raw := tx.Bucket(bucketOrgSettings).Get([]byte(orgID)); raw != nil {
			return json.Unmarshal(raw, &out)
		}
		return nil
	})
	if err != nil {
		return OrgSettings{}, fmt.Errorf("settings of org %s: %w", orgID, err)
	}
	return out, nil
}

// Credit adds amount USD to the org by hand, with reason on the entry.
func (s *BoltStore) Credit(orgID string, amount float64, reason string) (LedgerEntry, error) {
	nanos, err := toNanos(amount)
	if err == nil && nanos <= 0 {
		err = errors.New("a credit must be positive")
	}
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("credit org %s: %w", orgID, err)
	}
	var e LedgerEntry
	err = s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		var err error
		e, err = appendLedger(tx, orgID, LedgerCredit, nanos, nil, reason, time.Now())
		return err
	})
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("credit org %s: %w", orgID, err)
	}
	return e, nil
}

// CallRefund is the refund of a call as its record shows it.
type CallRefund struct {
	// AmountUSD is what was given back: the call's charge.
	AmountUSD float64 `json:"amount_usd"`
	// Reason is thumbs_down or eval_gate.
	Reason string `json:"reason"`
	// LedgerEntryID is the refund's ledger entry.
	LedgerEntryID string `json:"ledger_entry_id"`
	// CreatedAt is when the refund was made.
	CreatedAt time.Time `json:"created_at"`
}

// attachRefund sets c.Refund from the call's refund entry, if it has one.
func attachRefund(tx *bolt.Tx, c *Call) error {
	c.Refund = nil
	entryID := tx.Bucket(bucketCallRefunds).Get([]byte(c.ID))
	if entryID == nil {
		return nil
	}
	var e LedgerEntry
	if err := getJSON(tx.Bucket(bucketLedger), entryID, &e); err != nil {
		return fmt.Errorf("refund entry of call %s: %w", c.ID, err)
	}
	c.Refund = &CallRefund{AmountUSD: e.AmountUSD, Reason: e.Reason, LedgerEntryID: e.ID, CreatedAt: e.CreatedAt}
	return nil
}

// MaxUsageRange is the longest time range one usage report covers.
const MaxUsageRange = 92 * 24 * time.Hour

// UsageGroup is what calls of one day, model, key or operation added up to.
type UsageGroup struct {
	// Key is the day (YYYY-MM-DD, UTC), model id, key id or operation id
	// ("" for calls with no operation).
	Key string `json:"key"`
	// Calls counts the calls, failed ones included.
	Calls int `json:"calls"`
	// CostUSD is what the calls were billed.
	CostUSD float64 `json:"cost_usd"`
	// RefundedUSD is what was given back of it.
	RefundedUSD float64 `json:"refunded_usd"`
	// InputTokens counts every input token, the cache classes included.
	InputTokens int64 `json:"input_tokens"`
	// CacheReadTokens are the input tokens read from a prompt cache.
	CacheReadTokens int64 `json:"cache_read_tokens"`
	// CacheWriteTokens are the input tokens written to a prompt cache.
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// OutputTokens counts the output tokens.
	OutputTokens int64 `json:"output_tokens"`
	// cost and refunded sum nano-USD, so a total is exact.
	cost, refunded int64
}

// UsageReport is an org's usage over a time range, in total and grouped.
type UsageReport struct {
	// Object is always "usage".
	Object string `json:"object"`
	// From and To bound the range: calls made at or after From and before To.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Total adds up every call of the range; its Key is "".
	Total UsageGroup `json:"total"`
	// ByDay, ByModel, ByKey and ByOperation group the calls, each sorted by
	// key (days in order).
	ByDay       []UsageGroup `json:"by_day"`
	ByModel     []UsageGroup `json:"by_model"`
	ByKey       []UsageGroup `json:"by_key"`
	ByOperation []UsageGroup `json:"by_operation"`
}

// Usage adds up the org's calls made in [from, to), read through the org's
// call index in time order; the range is at most MaxUsageRange.
func (s *BoltStore) Usage(orgID string, from, to time.Time) (UsageReport, error) {
	if !to.After(from) || to.Sub(from) > MaxUsageRange {
		return UsageReport{}, fmt.Errorf("usage of org %s: the range must be positive and at most %v", orgID, MaxUsageRange)
	}
	s.rec.wait()
	rep := UsageReport{Object: "usage", From: from.UTC(), To: to.UTC()}
	groups := [4]map[string]*UsageGroup{{}, {}, {}, {}}
	err := s.db.View(func(tx *bolt.Tx) error {
		calls, refunds, ledger := tx.Bucket(bucketCalls), tx.Bucket(bucketCallRefunds), tx.Bucket(bucketLedger)
		prefix := indexPrefix(orgID)
		start := append(bytes.Clone(prefix), sortPosition(from, "")...)
		end := append(bytes.Clone(prefix), sortPosition(to, "")...)
		c := tx.Bucket(bucketCallsByOrg).Cursor()
		for k, id := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix) && bytes.Compare(k, end) < 0; k, id = c.Next() {
			raw := calls.Get(id)
			if raw == nil {
				continue
			}
			f := gjson.GetManyBytes(raw, "created_at", "model", "key_id", "operation_id", "cost_usd",
				"prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
			cost, _ := toNanos(f[4].Float())
			var refunded int64
			if entryID := refunds.Get(id); entryID != nil {
				if e := ledger.Get(entryID); e != nil {
					refunded, _ = toNanos(gjson.GetBytes(e, "amount_usd").Float())
				}
			}
			add := func(g *UsageGroup) {
				g.Calls++
				g.cost += cost
				g.refunded += refunded
				g.InputTokens += f[5].Int()
				g.OutputTokens += f[6].Int()
				g.CacheReadTokens += f[7].Int()
				g.CacheWriteTokens += f[8].Int() + f[9].Int()
			}
			add(&rep.Total)
			for i, key := range [4]string{f[0].Time().UTC().Format(time.DateOnly), f[1].Str, f[2].Str, f[3].Str} {
				g := groups[i][key]
				if g == nil {
					g = &UsageGroup{Key: key}
					groups[i][key] = g
				}
				add(g)
			}
		}
		return nil
	})
	if err != nil {
		return UsageReport{}, fmt.Errorf("usage of org %s: %w", orgID, err)
	}
	finish := func(g *UsageGroup) {
		g.CostUSD, g.RefundedUSD = fromNanos(g.cost), fromNanos(g.refunded)
	}
	finish(&rep.Total)
	lists := [4]*[]UsageGroup{&rep.ByDay, &rep.ByModel, &rep.ByKey, &rep.ByOperation}
	for i, m := range groups {
		out := make([]UsageGroup, 0, len(m))
		for _, g := range m {
			finish(g)
			out = append(out, *g)
		}
		sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
		*lists[i] = out
	}
	return rep, nil
}
