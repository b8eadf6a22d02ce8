package reliability

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestListKeysNeverShowsSecrets lists an org's keys newest first, page by
// page, with their settings, and never their secrets or hashes.
func TestListKeysNeverShowsSecrets(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	other, _ := s.EnsureOrg("other")
	exp := time.Now().Add(time.Hour).UTC()
	var secrets []string
	var ids []string
	for i, opt := range []KeyOptions{
		{Name: "first"},
		{Name: " ci ", Admin: true, ExpiresAt: &exp},
		{Budget: &KeyBudget{DayUSD: 1, MonthUSD: 10}, Models: []string{"m1", "m2", "m1"}},
	} {
		key, rec, err := s.CreateKeyWith(org.ID, "mg", opt)
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		secrets = append(secrets, key, hex.EncodeToString(rec.Hash[:]))
		ids = append(ids, rec.ID)
	}
	if _, _, err := s.CreateKey(other.ID, "mg"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	page, err := s.ListKeys(org.ID, PageQuery{Limit: 2}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || !page.HasMore || page.NextCursor == nil {
		t.Fatalf("first page: %d keys, has_more %v", len(page.Data), page.HasMore)
	}
	rest, err := s.ListKeys(org.ID, PageQuery{Limit: 2, Cursor: *page.NextCursor}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Data) != 1 || rest.HasMore {
		t.Fatalf("second page: %d keys, has_more %v", len(rest.Data), rest.HasMore)
	}
	all := append(page.Data, rest.Data...)
	for i, want := range []string{ids[2], ids[1], ids[0]} {
		if all[i].ID != want {
			t.Fatalf("key %d is %s, want %s (newest first)", i, all[i].ID, want)
		}
	}
	budgeted, ci, first := all[0], all[1], all[2]
	if first.Name != "first" || first.Prefix != "mg" || !strings.HasPrefix(first.Hint, "mg_live_") || first.State != KeyActive ||
		first.Source != KeySourceStore || first.Object != ObjectAPIKey || first.CreatedAt == nil || first.LastUsedAt != nil {
		t.Fatalf("first key: %+v", first)
	}
	if ci.Name != "ci" || !ci.Admin || ci.ExpiresAt == nil || !ci.ExpiresAt.Equal(exp) {
		t.Fatalf("ci key: %+v", ci)
	}
	if budgeted.Budget == nil || budgeted.Budget.DayUSD != 1 || budgeted.Spent == nil || strings.Join(budgeted.Models, ",") != "m1,m2" {
		t.Fatalf("budgeted key: %+v", budgeted)
	}
	raw, _ := json.Marshal(all)
	for _, secret := range secrets {
		if strings.Contains(string(raw), secret) || strings.Contains(string(raw), strings.TrimPrefix(secret, "mg_live_")) {
			t.Fatalf("the list shows a secret or a hash: %s", raw)
		}
	}
	for _, field := range []string{`"last_used_at":null`, `"revoked_at":null`, `"expires_at":null`, `"models":[]`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("the list lacks %s: %s", field, raw)
		}
	}
	if _, err := s.ListKeys(org.ID, PageQuery{Cursor: "!"}, now); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
}

// TestRevokeKey: a revoked key is kept and listed, KeysVersion moves on so
// that caches read it again, and revoking again changes nothing.
func TestRevokeKey(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	key, rec, err := s.CreateKey(org.ID, "mg")
	if err != nil {
		t.Fatal(err)
	}
	v0 := s.KeysVersion()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	got, err := s.RevokeKey(rec.ID, at)
	if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
		t.Fatalf("RevokeKey = %+v, %v", got, err)
	}
	if s.KeysVersion() == v0 {
		t.Fatal("revoking did not move KeysVersion on")
	}
	stored, err := s.KeyByHash(HashKey(key))
	if err != nil || stored.RevokedAt == nil || stored.State(time.Now()) != KeyRevoked {
		t.Fatalf("KeyByHash after revoke = %+v, %v", stored, err)
	}
	v1 := s.KeysVersion()
	again, err := s.RevokeKey(rec.ID, at.Add(time.Hour))
	if err != nil || !again.RevokedAt.Equal(at) || s.KeysVersion() != v1 {
		t.Fatalf("revoking again = %+v, %v, version %d -> %d", again, err, v1, s.KeysVersion())
	}
	info, err := s.KeyInfo(rec.ID, time.Now())
	if err != nil || info.State != KeyRevoked || info.RevokedAt == nil {
		t.Fatalf("KeyInfo = %+v, %v", info, err)
	}
	if _, err := s.RevokeKey("key_missing", at); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoking an unknown key: %v", err)
	}
}

// TestRotateKey: the new secret acts as the same key, the old one is gone,
// and revoked or expired keys are not rotated.
func TestRotateKey(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	old, rec, err := s.CreateKeyWith(org.ID, "mg", KeyOptions{Name: "svc", Budget: &KeyBudget{DayUSD: 2}, Models: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	v0 := s.KeysVersion()
	now := time.Now()
	key, got, err := s.RotateKey(rec.ID, "sk", now)
	if err != nil {
		t.Fatal(err)
	}
	if key == old || !strings.HasPrefix(key, "sk_live_") || got.ID != rec.ID || got.Name != "svc" || got.Budget == nil ||
		got.Budget.DayUSD != 2 || got.Models[0] != "m" || got.RotatedAt == nil || got.Prefix != "sk" || got.Hint != KeyHint(key) {
		t.Fatalf("RotateKey = %q, %+v", key, got)
	}
	if s.KeysVersion() == v0 {
		t.Fatal("rotating did not move KeysVersion on")
	}
	if _, err := s.KeyByHash(HashKey(old)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old secret still resolves: %v", err)
	}
	if k, err := s.KeyByHash(HashKey(key)); err != nil || k.ID != rec.ID {
		t.Fatalf("the new secret: %+v, %v", k, err)
	}
	if k, err := s.KeyByID(rec.ID); err != nil || k.Hash != HashKey(key) {
		t.Fatalf("KeyByID after rotation: %+v, %v", k, err)
	}
	page, _ := s.ListKeys(org.ID, PageQuery{}, now)
	if len(page.Data) != 1 || page.Data[0].Hint != KeyHint(key) {
		t.Fatalf("list after rotation: %+v", page.Data)
	}
	if _, err := s.RevokeKey(rec.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RotateKey(rec.ID, "mg", now); !errors.Is(err, ErrConflict) {
		t.Fatalf("rotating a revoked key: %v", err)
	}
	exp := now.Add(time.Minute)
	_, short, err := s.CreateKeyWith(org.ID, "mg", KeyOptions{ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RotateKey(short.ID, "mg", now.Add(2*time.Minute)); !errors.Is(err, ErrConflict) {
		t.Fatalf("rotating an expired key: %v", err)
	}
	if _, _, err := s.RotateKey("key_missing", "mg", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rotating an unknown key: %v", err)
	}
}

// TestKeyExpiryAndOptions: a key expires at its time; options out of their
// bounds are refused naming the field.
func TestKeyExpiryAndOptions(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	exp := time.Now().Add(time.Hour)
	_, rec, err := s.CreateKeyWith(org.ID, "mg", KeyOptions{ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State(exp.Add(-time.Second)) != KeyActive || rec.State(exp) != KeyExpired {
		t.Fatalf("states around the expiry: %s, %s", rec.State(exp.Add(-time.Second)), rec.State(exp))
	}
	past := time.Now().Add(-time.Second)
	for _, tt := range []struct {
		opt   KeyOptions
		param string
	}{
		{KeyOptions{ExpiresAt: &past}, "expires_at"},
		{KeyOptions{Name: strings.Repeat("n", MaxKeyNameLen+1)}, "name"},
		{KeyOptions{Name: "a\nb"}, "name"},
		{KeyOptions{Budget: &KeyBudget{DayUSD: -1}}, "budget.day_usd"},
		{KeyOptions{Budget: &KeyBudget{MonthUSD: math.NaN()}}, "budget.month_usd"},
		{KeyOptions{Models: []string{"a", ""}}, "models[1]"},
	} {
		_, _, err := s.CreateKeyWith(org.ID, "mg", tt.opt)
		var verr *ValidationError
		if !errors.As(err, &verr) || verr.Param != tt.param {
			t.Errorf("options %+v: %v, want a validation error of %s", tt.opt, err, tt.param)
		}
	}
	// A budget of zeros is no budget.
	_, rec, err = s.CreateKeyWith(org.ID, "mg", KeyOptions{Budget: &KeyBudget{}})
	if err != nil || rec.Budget != nil {
		t.Fatalf("zero budget: %+v, %v", rec.Budget, err)
	}
}

// storedUse reads the last use the store file holds for a key.
func storedUse(t *testing.T, s *BoltStore, id string) int64 {
	t.Helper()
	var n int64
	if err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketKeyLastUsed).Get([]byte(id)); len(v) == 8 {
			n = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeyLastUsedIsBatched: a use is visible at once but written only with
// a commit, and at most once per KeyUseInterval; Close writes the rest.
func TestKeyLastUsedIsBatched(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	_, rec, _ := s.CreateKey(org.ID, "mg")
	commit := func() {
		t.Helper()
		s.RecordCall(&Call{OrgID: org.ID, Model: "m", Status: CallSucceeded, RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`)})
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s.TouchKey(rec.ID, t0)
	if got, _ := s.KeyLastUsed(rec.ID); got == nil || !got.Equal(t0) {
		t.Fatalf("last used after a touch: %v", got)
	}
	if storedUse(t, s, rec.ID) != 0 {
		t.Fatal("a touch wrote to the store by itself")
	}
	commit()
	if got := storedUse(t, s, rec.ID); got != t0.UnixNano() {
		t.Fatalf("stored use after a commit: %d, want %d", got, t0.UnixNano())
	}
	// Uses within the interval stay in memory.
	t1 := t0.Add(KeyUseInterval / 2)
	s.TouchKey(rec.ID, t1)
	s.TouchKey(rec.ID, t0) // an older use changes nothing
	commit()
	if got := storedUse(t, s, rec.ID); got != t0.UnixNano() {
		t.Fatalf("a use within the interval was written: %d", got)
	}
	page, _ := s.ListKeys(org.ID, PageQuery{}, t1)
	if page.Data[0].LastUsedAt == nil || !page.Data[0].LastUsedAt.Equal(t1) {
		t.Fatalf("listed last use %v, want %v", page.Data[0].LastUsedAt, t1)
	}
	t2 := t0.Add(KeyUseInterval)
	s.TouchKey(rec.ID, t2)
	commit()
	if got := storedUse(t, s, rec.ID); got != t2.UnixNano() {
		t.Fatalf("a use an interval later was not written: %d", got)
	}
	// Config keys are tracked too, and Close writes what is pending.
	s.TouchKey("key_cfg_0123456789ab", t2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = reopenTestStore(t, path, BoltOptions{})
	for id, want := range map[string]time.Time{rec.ID: t2, "key_cfg_0123456789ab": t2} {
		if got, err := s.KeyLastUsed(id); err != nil || got == nil || !got.Equal(want) {
			t.Fatalf("last use of %s after a restart: %v, %v", id, got, err)
		}
	}
}

// TestKeySpendCounted: a key's charges count in the day and month of its
// calls, before and after their commit, and old daily counts are pruned.
func TestKeySpendCounted(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{BatchDelay: time.Hour, BatchSize: 1 << 20})
	org, _ := s.EnsureOrg("acme")
	day := time.Date(2026, 5, 10, 23, 0, 0, 0, time.UTC)
	rec := func(keyID string, at time.Time, usd float64) {
		s.RecordCall(&Call{OrgID: org.ID, KeyID: keyID, Model: "m", Status: CallSucceeded, CreatedAt: at,
			RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: usd})
	}
	rec("key_a", day, 0.25)
	rec("key_a", day.Add(2*time.Hour), 0.5) // the next day, same month
	rec("key_b", day, 1)
	rec("", day, 2) // no key: the org pays, no key counts it
	// Queued, not committed (the writer waits): already counted.
	d, m, err := s.KeySpend("key_a", day)
	if err != nil || d != 0.25 || m != 0.75 {
		t.Fatalf("queued spend of key_a: day %v month %v, %v; want 0.25, 0.75", d, m, err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key        string
		at         time.Time
		day, month float64
	}{
		{"key_a", day, 0.25, 0.75},
		{"key_a", day.Add(2 * time.Hour), 0.5, 0.75},
		{"key_b", day, 1, 1},
		{"key_a", day.AddDate(0, 1, 0), 0, 0},
	} {
		d, m, err := s.KeySpend(tt.key, tt.at)
		if err != nil || d != tt.day || m != tt.month {
			t.Errorf("spend of %s at %s: %v, %v, %v; want %v, %v", tt.key, tt.at, d, m, err, tt.day, tt.month)
		}
	}
	// A first charge of a day long after removes the stale daily counts.
	later := day.AddDate(0, 0, keySpendDays+2)
	rec("key_a", later, 0.1)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKeySpend)
		d0, _ := spendPeriods(day)
		_, m0 := spendPeriods(day)
		if b.Get(keySpendKey("key_a", d0)) != nil {
			t.Error("a daily count older than keySpendDays was kept")
		}
		if b.Get(keySpendKey("key_a", m0)) == nil || b.Get(keySpendKey("key_b", d0)) == nil {
			t.Error("pruning removed a monthly count or another key's count")
		}
		return nil
	})
	ka := s.keys.spend.account("key_a")
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if len(ka.queued) != 0 || len(ka.reserved) != 0 {
		t.Fatalf("book after commit: queued %v reserved %v", ka.queued, ka.reserved)
	}
}

// TestReserveKeyBudget: a key's calls hold their worst case against each
// capped period; a refusal says what the budget, spend and need are; a
// release, also through the linked org reservation, gives it back.
func TestReserveKeyBudget(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	at := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	if r, err := s.ReserveKeyBudget("key_a", KeyBudget{}, 100, at); r != nil || err != nil {
		t.Fatalf("no budget: %v, %v", r, err)
	}
	b := KeyBudget{DayUSD: 1, MonthUSD: 1.5}
	r1, err := s.ReserveKeyBudget("key_a", b, 0.6, at)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ReserveKeyBudget("key_a", b, 0.5, at)
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("over the daily budget: %v", err)
	}
	if be.Period != "day" || be.LimitUSD != 1 || be.ReservedUSD != 0.6 || be.NeedUSD != 0.5 ||
		!be.ResetsAt.Equal(time.Date(2026, 5, 11, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("BudgetError = %+v", be)
	}
	// Another key has a budget of its own.
	if _, err := s.ReserveKeyBudget("key_b", b, 0.9, at); err != nil {
		t.Fatal(err)
	}
	// Settle r1 with a charge of 0.4 through a linked org reservation.
	orgRes, err := s.Reserve(org.ID, 0.6, 0)
	if err != nil {
		t.Fatal(err)
	}
	orgRes.Link(r1)
	s.RecordCall(&Call{OrgID: org.ID, KeyID: "key_a", Model: "m", Status: CallSucceeded, CreatedAt: at,
		RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: 0.4})
	orgRes.Release()
	r1.Release() // already released with orgRes: nothing more
	if _, err := s.ReserveKeyBudget("key_a", b, 0.7, at); !errors.As(err, &be) || be.SpentUSD != 0.4 {
		t.Fatalf("0.4 spent + 0.7 over a 1 USD day: %v", err)
	}
	r2, err := s.ReserveKeyBudget("key_a", b, 0.6, at)
	if err != nil {
		t.Fatalf("0.4 spent + 0.6 within a 1 USD day: %v", err)
	}
	r2.Release()
	// The next day has a fresh daily budget, but the month holds 0.4.
	next := at.AddDate(0, 0, 1)
	tight := KeyBudget{DayUSD: 1, MonthUSD: 1.2}
	if _, err := s.ReserveKeyBudget("key_a", tight, 0.9, next); !errors.As(err, &be) || be.Period != "month" || be.SpentUSD != 0.4 {
		t.Fatalf("over the monthly budget: %v", err)
	}
	r3, err := s.ReserveKeyBudget("key_a", tight, 0.8, next)
	if err != nil {
		t.Fatal(err)
	}
	r3.Release()
	ka := s.keys.spend.account("key_a")
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if len(ka.reserved) != 0 {
		t.Fatalf("reservations left after every release: %v", ka.reserved)
	}
}

// TestKeyBudgetNeverExceeded runs many concurrent calls of one key against
// a small budget, each reserving its worst case with the org's credit,
// charging part of it through the call writer and releasing: the key's
// charges never pass its budget, and some calls are refused.
func TestKeyBudgetNeverExceeded(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			s, _ := openTestStore(t, BoltOptions{OnError: func(err error) { t.Logf("store: %v", err) }})
			org, _ := s.EnsureOrg("acme")
			if _, err := s.Topup(org.ID, 1000, "test"); err != nil {
				t.Fatal(err)
			}
			at := time.Now().UTC()
			budget := KeyBudget{DayUSD: 2, MonthUSD: 3}
			cap, _ := toNanos(budget.DayUSD)
			var charged atomic.Int64
			var refused atomic.Int64
			check := func() {
				ka := s.keys.spend.account("key_x")
				ka.mu.Lock()
				day, _ := spendPeriods(at)
				var spent int64
				_ = s.db.View(func(tx *bolt.Tx) error {
					spent, _ = ka.spentTx(tx, "key_x", day, "")
					return nil
				})
				ka.mu.Unlock()
				if spent > cap {
					t.Errorf("the key's charges %d passed its budget %d", spent, cap)
				}
			}
			var wg sync.WaitGroup
			for w := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seed, uint64(w)))
					for i := range 30 {
						need := float64(rng.IntN(300_000)) / 1e6 // up to 0.3 USD
						kr, err := s.ReserveKeyBudget("key_x", budget, need, at)
						if err != nil {
							if !errors.Is(err, ErrBudgetExceeded) {
								t.Error(err)
								return
							}
							refused.Add(1)
							continue
						}
						res, err := s.Reserve(org.ID, need, 0)
						if err != nil {
							kr.Release()
							t.Error(err)
							return
						}
						res.Link(kr)
						charge := res.USD() * rng.Float64()
						if rng.IntN(6) == 0 {
							charge = 0
						}
						if charge > 0 {
							n, _ := toNanos(charge)
							charged.Add(n)
							s.RecordCall(&Call{ID: fmt.Sprintf("c-%d-%d-%d", seed, w, i), OrgID: org.ID, KeyID: "key_x", Model: "m",
								Status: CallSucceeded, CreatedAt: at, RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: charge})
						}
						res.Release()
						if rng.IntN(10) == 0 {
							if err := s.Sync(); err != nil {
								t.Error(err)
							}
						}
						check()
					}
				}()
			}
			wg.Wait()
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			check()
			d, _, err := s.KeySpend("key_x", at)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := toNanos(d); n != charged.Load() || n > cap {
				t.Fatalf("key spend %d nano-USD, charged %d, budget %d", n, charged.Load(), cap)
			}
			if refused.Load() == 0 {
				t.Fatal("no call was refused: the test did not reach the budget")
			}
		})
	}
}

// TestKeysIndexedOnOpen: keys of a store written before keys were indexed
// are listed and found by id after the store is opened again.
func TestKeysIndexedOnOpen(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	_, rec, err := s.CreateKey(org.ID, "mg")
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketKeysByID, bucketKeysByOrg} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyByID(rec.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the test did not remove the index: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = reopenTestStore(t, path, BoltOptions{})
	if got, err := s.KeyByID(rec.ID); err != nil || got.OrgID != org.ID {
		t.Fatalf("KeyByID after reopening: %+v, %v", got, err)
	}
	page, err := s.ListKeys(org.ID, PageQuery{}, time.Now())
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != rec.ID {
		t.Fatalf("ListKeys after reopening: %+v, %v", page.Data, err)
	}
}

// TestOrgByName finds orgs by name without creating any.
func TestOrgByName(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	acme, _ := s.EnsureOrg("acme")
	_, _ = s.EnsureOrg("beta")
	if got, err := s.OrgByName("acme"); err != nil || got.ID != acme.ID {
		t.Fatalf("OrgByName(acme) = %+v, %v", got, err)
	}
	if _, err := s.OrgByName("acm"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OrgByName of a typo: %v", err)
	}
	names, err := s.OrgNames()
	if err != nil || strings.Join(names, ",") != "acme,beta" {
		t.Fatalf("OrgNames = %v, %v", names, err)
	}
}
