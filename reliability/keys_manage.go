package reliability

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the key lifecycle (see bolt.go for the others).
var (
	// bucketKeysByID maps a key's id to its hash, the key of its record
	// in bucketKeys.
	bucketKeysByID = []byte("keys_by_id")
	// bucketKeysByOrg lists an org's keys: org | created | key id.
	bucketKeysByOrg = []byte("keys_by_org")
)

// ObjectAPIKey is the object tag of a KeyInfo.
const ObjectAPIKey = "api_key"

// States of a key, as KeyInfo.State gives them.
const (
	// KeyActive is a key that authenticates.
	KeyActive = "active"
	// KeyRevoked is a key revoked by RevokeKey.
	KeyRevoked = "revoked"
	// KeyExpired is a key past its ExpiresAt.
	KeyExpired = "expired"
)

// Sources of a key, as KeyInfo.Source gives them.
const (
	// KeySourceStore is a key issued at run time and kept in the store.
	KeySourceStore = "store"
	// KeySourceConfig is a key declared in the gateway's config; it is
	// changed by changing the config.
	KeySourceConfig = "config"
)

// Bounds of the key options.
const (
	// MaxKeyNameLen bounds a key's name, in characters.
	MaxKeyNameLen = 200
	// MaxKeyModels bounds a key's model list.
	MaxKeyModels = 256
	// maxKeyModelLen bounds one model id of that list.
	maxKeyModelLen = 256
)

// keyState is what the store keeps in memory about keys: the version that
// lets authentication caches notice a revocation, when each key was last
// used, and the per-key budget book.
type keyState struct {
	// version grows after every committed change to an existing key
	// (revocation, rotation).
	version atomic.Uint64
	use     keyUse
	spend   keySpendBook
}

// KeysVersion grows after every committed change to an existing key
// (revocation, rotation). A cache of authenticated keys that notes the
// version before it reads a key, and drops what it holds when the version
// has moved on, never serves a key revoked before the request began.
func (s *BoltStore) KeysVersion() uint64 { return s.keys.version.Load() }

// KeyOptions are the settings of a new key; the zero value is a plain key.
type KeyOptions struct {
	// Name labels the key; at most MaxKeyNameLen characters, no control
	// characters.
	Name string
	// Admin lets the key manage its org's keys through the API.
	Admin bool
	// ExpiresAt is when the key stops working; it must be in the future.
	// Nil means never.
	ExpiresAt *time.Time
	// Budget caps what the key's calls cost per UTC day and month; nil or
	// zero limits mean none.
	Budget *KeyBudget
	// Models limits the key to these model ids; empty means every model
	// of its org. Duplicates are dropped.
	Models []string
}

// normalize checks the options and puts them in the stored form; its
// errors are *ValidationError naming the field.
func (o *KeyOptions) normalize(now time.Time) error {
	o.Name = strings.TrimSpace(o.Name)
	if textLen(o.Name) > MaxKeyNameLen {
		return invalid("name", "must be at most %d characters", MaxKeyNameLen)
	}
	if strings.IndexFunc(o.Name, unicode.IsControl) >= 0 {
		return invalid("name", "must not contain control characters")
	}
	if o.ExpiresAt != nil {
		at := o.ExpiresAt.UTC()
		if !at.After(now) {
			return invalid("expires_at", "must be in the future (it is %s)", at.Format(time.RFC3339))
		}
		o.ExpiresAt = &at
	}
	if o.Budget != nil {
		for _, l := range []struct {
			param string
			usd   float64
		}{{"budget.day_usd", o.Budget.DayUSD}, {"budget.month_usd", o.Budget.MonthUSD}} {
			if math.IsNaN(l.usd) || l.usd < 0 || l.usd > maxLedgerUSD {
				return invalid(l.param, "must be a number of USD from 0 to %g (0: no limit)", float64(maxLedgerUSD))
			}
		}
		if o.Budget.DayUSD == 0 && o.Budget.MonthUSD == 0 {
			o.Budget = nil
		} else {
			b := *o.Budget
			o.Budget = &b
		}
	}
	if len(o.Models) > MaxKeyModels {
		return invalid("models", "must list at most %d models", MaxKeyModels)
	}
	models := make([]string, 0, len(o.Models))
	for i, m := range o.Models {
		if m == "" || len(m) > maxKeyModelLen {
			return invalid(fmt.Sprintf("models[%d]", i), "must be a model id of 1 to %d bytes", maxKeyModelLen)
		}
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	o.Models = nil
	if len(models) > 0 {
		o.Models = models
	}
	return nil
}

// apply copies the normalized options onto a new key's record.
func (o *KeyOptions) apply(rec *APIKey) {
	rec.Name, rec.Admin, rec.ExpiresAt, rec.Budget, rec.Models = o.Name, o.Admin, o.ExpiresAt, o.Budget, o.Models
}

// putKeyTx writes a key record with its index entries.
func putKeyTx(tx *bolt.Tx, rec APIKey) error {
	if err := putJSON(tx.Bucket(bucketKeys), rec.Hash[:], rec); err != nil {
		return err
	}
	if err := tx.Bucket(bucketKeysByID).Put([]byte(rec.ID), rec.Hash[:]); err != nil {
		return fmt.Errorf("index key %s by id: %w", rec.ID, err)
	}
	if err := tx.Bucket(bucketKeysByOrg).Put(indexKey(indexPrefix(rec.OrgID), rec.CreatedAt, rec.ID), []byte(rec.ID)); err != nil {
		return fmt.Errorf("index key %s by org: %w", rec.ID, err)
	}
	return nil
}

// indexKeys indexes the keys that are not in the id and org indexes yet:
// those of a store written before keys were indexed, or by an older
// gateway since. It reads every key record, which are few.
func indexKeys(tx *bolt.Tx) error {
	byID := tx.Bucket(bucketKeysByID)
	var missing []APIKey
	err := tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
		if len(k) != len(HashKey("")) {
			return fmt.Errorf("key record under a %d-byte key", len(k))
		}
		rec, err := decodeKey([32]byte(k), v)
		if err != nil {
			return err
		}
		if !bytes.Equal(byID.Get([]byte(rec.ID)), k) {
			missing = append(missing, rec)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index keys: %w", err)
	}
	for _, rec := range missing {
		if err := putKeyTx(tx, rec); err != nil {
			return fmt.Errorf("index keys: %w", err)
		}
	}
	return nil
}

// keyByIDTx reads the key with this id inside tx.
func keyByIDTx(tx *bolt.Tx, id string) (APIKey, error) {
	h := tx.Bucket(bucketKeysByID).Get([]byte(id))
	if len(h) != len(HashKey("")) {
		return APIKey{}, fmt.Errorf("key %s: %w", id, ErrNotFound)
	}
	v := tx.Bucket(bucketKeys).Get(h)
	if v == nil {
		return APIKey{}, fmt.Errorf("key %s: index names a record that is not stored", id)
	}
	return decodeKey([32]byte(h), v)
}

// KeyByID returns the key with this id, or ErrNotFound.
func (s *BoltStore) KeyByID(id string) (APIKey, error) {
	var rec APIKey
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = keyByIDTx(tx, id)
		return err
	})
	if err != nil {
		return APIKey{}, fmt.Errorf("key by id: %w", err)
	}
	return rec, nil
}

// State is KeyActive, KeyRevoked or KeyExpired at time t.
func (k APIKey) State(t time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt != nil && !t.Before(*k.ExpiresAt):
		return KeyExpired
	}
	return KeyActive
}

// KeySpent is what a key's calls have cost in the current UTC day and
// month, charges not yet committed included.
type KeySpent struct {
	// DayUSD is the spend of the current UTC day.
	DayUSD float64 `json:"day_usd"`
	// MonthUSD is the spend of the current UTC month.
	MonthUSD float64 `json:"month_usd"`
}

// KeyInfo is what a list of keys shows of one: never the key itself,
// nor its hash.
type KeyInfo struct {
	// Object is always "api_key".
	Object string `json:"object"`
	// ID identifies the key; config keys get "key_cfg_" and 12 hex digits
	// of their hash.
	ID string `json:"id"`
	// OrgID is the org the key acts for.
	OrgID string `json:"org_id"`
	// Name is the key's label, or "".
	Name string `json:"name"`
	// Prefix is the key's text before "_live_".
	Prefix string `json:"prefix"`
	// Hint is the prefix and the last characters of the key; "" for a
	// config key given by its hash only.
	Hint string `json:"hint"`
	// Source is KeySourceStore or KeySourceConfig.
	Source string `json:"source"`
	// State is KeyActive, KeyRevoked or KeyExpired.
	State string `json:"state"`
	// Admin tells whether the key may manage its org's keys.
	Admin bool `json:"admin"`
	// CreatedAt is when the key was issued; null for config keys.
	CreatedAt *time.Time `json:"created_at"`
	// LastUsedAt is when the key last authenticated a request; null if
	// never (see TouchKey for how exact it is).
	LastUsedAt *time.Time `json:"last_used_at"`
	// ExpiresAt is when the key stops working, or null.
	ExpiresAt *time.Time `json:"expires_at"`
	// RevokedAt is when the key was revoked, or null.
	RevokedAt *time.Time `json:"revoked_at"`
	// RotatedAt is when the key's secret was last replaced, or null.
	RotatedAt *time.Time `json:"rotated_at"`
	// Budget is the key's spending cap, or null.
	Budget *KeyBudget `json:"budget"`
	// Spent is what the key spent in the current UTC day and month; only
	// keys with a budget show it.
	Spent *KeySpent `json:"spent,omitempty"`
	// Models limits the key to these models; empty means every model of
	// its org.
	Models []string `json:"models"`
}

// Info is what a list shows of the stored key k at time now, used last at
// lastUsed (nil if never).
func (k APIKey) Info(now time.Time, lastUsed *time.Time) KeyInfo {
	created := k.CreatedAt
	models := k.Models
	if models == nil {
		models = []string{}
	}
	return KeyInfo{
		Object: ObjectAPIKey, ID: k.ID, OrgID: k.OrgID, Name: k.Name, Prefix: k.Prefix, Hint: k.Hint,
		Source: KeySourceStore, State: k.State(now), Admin: k.Admin, CreatedAt: &created, LastUsedAt: lastUsed,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, RotatedAt: k.RotatedAt, Budget: k.Budget, Models: models,
	}
}

// KeyInfo is the list entry of the stored key with this id, with its last
// use and, when it has a budget, its spend.
func (s *BoltStore) KeyInfo(id string, now time.Time) (KeyInfo, error) {
	var info KeyInfo
	err := s.db.View(func(tx *bolt.Tx) error {
		rec, err := keyByIDTx(tx, id)
		if err != nil {
			return err
		}
		info = rec.Info(now, s.lastUsedTx(tx, rec.ID))
		return nil
	})
	if err != nil {
		return KeyInfo{}, fmt.Errorf("key %s: %w", id, err)
	}
	if err := s.attachSpent(&info, now); err != nil {
		return KeyInfo{}, err
	}
	return info, nil
}

// ListKeys lists the org's stored keys newest first, revoked ones
// included, with their last use and, for keys with a budget, their spend
// at now.
func (s *BoltStore) ListKeys(orgID string, q PageQuery, now time.Time) (Page[KeyInfo], error) {
	page := Page[KeyInfo]{Object: ObjectList, Data: []KeyInfo{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		ids, err := pageIndex(tx.Bucket(bucketKeysByOrg), indexPrefix(orgID), q)
		if err != nil {
			return err
		}
		for _, id := range ids.ids {
			rec, err := keyByIDTx(tx, id)
			if err != nil {
				return err
			}
			page.Data = append(page.Data, rec.Info(now, s.lastUsedTx(tx, rec.ID)))
		}
		page.HasMore, page.NextCursor = ids.hasMore, ids.next
		return nil
	})
	if err != nil {
		return Page[KeyInfo]{}, fmt.Errorf("list keys of org %s: %w", orgID, err)
	}
	for i := range page.Data {
		if err := s.attachSpent(&page.Data[i], now); err != nil {
			return Page[KeyInfo]{}, fmt.Errorf("list keys of org %s: %w", orgID, err)
		}
	}
	return page, nil
}

// attachSpent sets info.Spent for a key with a budget.
func (s *BoltStore) attachSpent(info *KeyInfo, now time.Time) error {
	if info.Budget == nil {
		return nil
	}
	day, month, err := s.KeySpend(info.ID, now)
	if err != nil {
		return err
	}
	info.Spent = &KeySpent{DayUSD: day, MonthUSD: month}
	return nil
}

// RevokeKey revokes the key with this id at time at: from the next request
// on it no longer authenticates (see KeysVersion). Revoking a revoked key
// changes nothing. It returns the key's record.
func (s *BoltStore) RevokeKey(id string, at time.Time) (APIKey, error) {
	var rec APIKey
	changed := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		if rec, err = keyByIDTx(tx, id); err != nil {
			return err
		}
		if rec.RevokedAt != nil {
			return nil
		}
		t := at.UTC()
		rec.RevokedAt = &t
		changed = true
		return putJSON(tx.Bucket(bucketKeys), rec.Hash[:], rec)
	})
	if err != nil {
		return APIKey{}, fmt.Errorf("revoke key %s: %w", id, err)
	}
	if changed {
		s.keys.version.Add(1)
	}
	return rec, nil
}

// RotateKey replaces the secret of the key with this id by a new key of
// the given prefix, returned once: from the next request on the old text
// no longer authenticates, and the new one acts as the same key (same id,
// name, role, budget, spend, model list and expiry). A revoked or expired
// key cannot be rotated (ErrConflict); create a new one instead.
func (s *BoltStore) RotateKey(id, prefix string, at time.Time) (string, APIKey, error) {
	key, err := GenerateKey(prefix)
	if err != nil {
		return "", APIKey{}, fmt.Errorf("rotate key %s: %w", id, err)
	}
	var rec APIKey
	err = s.db.Update(func(tx *bolt.Tx) error {
		old, err := keyByIDTx(tx, id)
		if err != nil {
			return err
		}
		if state := old.State(at); state != KeyActive {
			return fmt.Errorf("the key is %s; create a new key instead: %w", state, ErrConflict)
		}
		rec = old
		rec.Hash, rec.Hint, rec.Prefix = HashKey(key), KeyHint(key), keyPrefixOf(key)
		t := at.UTC()
		rec.RotatedAt = &t
		keys := tx.Bucket(bucketKeys)
		if keys.Get(rec.Hash[:]) != nil {
			return fmt.Errorf("generated key %s exists already: %w", rec.Hint, ErrConflict)
		}
		if err := keys.Delete(old.Hash[:]); err != nil {
			return fmt.Errorf("remove old secret: %w", err)
		}
		return putKeyTx(tx, rec)
	})
	if err != nil {
		return "", APIKey{}, fmt.Errorf("rotate key %s: %w", id, err)
	}
	s.keys.version.Add(1)
	return key, rec, nil
}

// OrgByName returns the org with this name, or ErrNotFound; unlike
// EnsureOrg it never creates one.
func (s *BoltStore) OrgByName(name string) (Org, error) {
	var org Org
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketOrgNames).Get([]byte(name))
		if id == nil {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bucketOrgs), id, &org)
	})
	if err != nil {
		return Org{}, fmt.Errorf("org named %q: %w", name, err)
	}
	return org, nil
}

// OrgNames lists the names of every org, in byte order.
func (s *BoltStore) OrgNames() ([]string, error) {
	var names []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOrgNames).ForEach(func(k, _ []byte) error {
			names = append(names, string(bytes.Clone(k)))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list org names: %w", err)
	}
	return names, nil
}
