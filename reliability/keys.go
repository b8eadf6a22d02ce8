package reliability

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// keyMarker separates a key's prefix from its secret part (SPEC 5.2).
const keyMarker = "_live_"

// keySecretLen is the number of random base62 characters in a key: about
// 190 bits, far beyond guessing.
const keySecretLen = 32

// base62 is the alphabet of a key's secret part: characters that survive
// copy and paste, shells and URLs without quoting.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// keyHintTail is how many trailing characters of a key its hint shows.
const keyHintTail = 4

// APIKey is the stored record of an API key. The key itself is never
// stored, only its hash, so a copy of the database grants no access.
type APIKey struct {
	// ID identifies the key record, e.g. for revocation; it is not secret.
	ID string `json:"id"`
	// OrgID is the org the key acts for.
	OrgID string `json:"org_id"`
	// Hash is HashKey of the key; it is the record's bbolt key, so it is
	// not repeated in the stored value.
	Hash [32]byte `json:"-"`
	// Hint lets a person tell keys apart without revealing them.
	Hint string `json:"hint"`
	// Prefix is the key's text before "_live_" (the gateway's key_prefix
	// when the key was issued).
	Prefix string `json:"prefix,omitempty"`
	// Name is a label that says what the key is for; it may be empty.
	Name string `json:"name,omitempty"`
	// CreatedAt is when the key was issued.
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the key stops working; nil means never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// RevokedAt is when the key was revoked; nil while it is not. A revoked
	// key is kept, so that it is still listed and its calls still name it.
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// RotatedAt is when the key's secret was last replaced (RotateKey);
	// the id, name, budget and limits stay the same.
	RotatedAt *time.Time `json:"rotated_at,omitempty"`
	// Admin lets the key manage its own org's keys through the API.
	Admin bool `json:"admin,omitempty"`
	// Budget caps what the key's calls may cost per UTC day and month;
	// nil means no cap beyond the org's credit.
	Budget *KeyBudget `json:"budget,omitempty"`
	// Models, when set, limits the key to these model ids, within the
	// models its org may use.
	Models []string `json:"models,omitempty"`
}

// GenerateKey returns a new API key "<prefix>_live_<random>" whose random
// part is 32 base62 characters from crypto/rand. prefix is letters, digits
// and dashes, so the key's form stays unambiguous.
func GenerateKey(prefix string) (string, error) {
	if err := checkKeyPrefix(prefix); err != nil {
		return "", err
	}
	secret := make([]byte, 0, keySecretLen)
	buf := make([]byte, keySecretLen+keySecretLen/2)
	for len(secret) < keySecretLen {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generate key: %w", err)
		}
		for _, b := range buf {
			// Bytes from 248 up would favour the first characters of the
			// alphabet: skip them so every character is equally likely.
			if b >= 248 || len(secret) == keySecretLen {
				continue
			}
			secret = append(secret, base62[b%62])
		}
	}
	return prefix + keyMarker + string(secret), nil
}

// checkKeyPrefix rejects prefixes that would make a key's parts ambiguous.
func checkKeyPrefix(prefix string) error {
	if prefix == "" {
		return errors.New("key prefix is empty")
	}
	for _, r := range prefix {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' {
			return fmt.Errorf("key prefix %q: only letters, digits and '-' are allowed", prefix)
		}
	}
	return nil
}

// HashKey is the only form in which keys are stored: the SHA-256 of the
// key. Keys carry enough entropy that a slow password hash adds nothing.
func HashKey(key string) [32]byte {
	return sha256.Sum256([]byte(key))
}

// KeyHint is a printable, non-secret reminder of a key: its text up to and
// including "_live_" followed by its last 4 characters. A secret part of 8
// characters or fewer is left out entirely, since 4 of them would give
// half of it away.
func KeyHint(key string) string {
	head, secret, found := strings.Cut(key, keyMarker)
	if found {
		head += keyMarker
	} else {
		head, secret = "", key
	}
	if len(secret) <= 2*keyHintTail {
		return head
	}
	return head + secret[len(secret)-keyHintTail:]
}

// CreateKey issues a new key for an existing org and stores its hash.
func (s *BoltStore) CreateKey(orgID, prefix string) (string, APIKey, error) {
	return s.CreateKeyWith(orgID, prefix, KeyOptions{})
}

// CreateKeyWith issues a new key for an existing org with a name, an
// expiry, a budget, a model list or the admin role, and stores its hash.
// The key text is returned once; only its hash is stored.
func (s *BoltStore) CreateKeyWith(orgID, prefix string, opt KeyOptions) (string, APIKey, error) {
	now := time.Now().UTC()
	if err := opt.normalize(now); err != nil {
		return "", APIKey{}, fmt.Errorf("create key for org %s: %w", orgID, err)
	}
	key, err := GenerateKey(prefix)
	if err != nil {
		return "", APIKey{}, fmt.Errorf("create key for org %s: %w", orgID, err)
	}
	rec := newKeyRecord(orgID, key, now)
	opt.apply(&rec)
	err = s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		if tx.Bucket(bucketKeys).Get(rec.Hash[:]) != nil {
			// 190 random bits: this is a broken random source, not luck.
			return fmt.Errorf("generated key %s exists already: %w", rec.Hint, ErrConflict)
		}
		return putKeyTx(tx, rec)
	})
	if err != nil {
		return "", APIKey{}, fmt.Errorf("create key for org %s: %w", orgID, err)
	}
	return key, rec, nil
}

// newKeyRecord is the record of a new key.
func newKeyRecord(orgID, key string, now time.Time) APIKey {
	return APIKey{
		ID:        NewID("key_"),
		OrgID:     orgID,
		Hash:      HashKey(key),
		Hint:      KeyHint(key),
		Prefix:    keyPrefixOf(key),
		CreatedAt: now,
	}
}

// keyPrefixOf is the text of key before "_live_", or "" when it has none.
func keyPrefixOf(key string) string {
	head, _, found := strings.Cut(key, keyMarker)
	if !found {
		return ""
	}
	return head
}

// AddKey stores the hash of a key chosen elsewhere for an existing org.
func (s *BoltStore) AddKey(orgID, key string) (APIKey, error) {
	if key == "" {
		return APIKey{}, fmt.Errorf("add key for org %s: key is empty", orgID)
	}
	rec := newKeyRecord(orgID, key, time.Now().UTC())
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		keys := tx.Bucket(bucketKeys)
		if v := keys.Get(rec.Hash[:]); v != nil {
			existing, err := decodeKey(rec.Hash, v)
			if err != nil {
				return err
			}
			if existing.OrgID != orgID {
				return fmt.Errorf("key %s belongs to another org: %w", rec.Hint, ErrConflict)
			}
			rec = existing
			return nil
		}
		return putKeyTx(tx, rec)
	})
	if err != nil {
		return APIKey{}, fmt.Errorf("add key for org %s: %w", orgID, err)
	}
	return rec, nil
}

// KeyByHash returns the key whose hash is h; the gateway authenticates a
// request by hashing its bearer token and looking it up here.
func (s *BoltStore) KeyByHash(h [32]byte) (APIKey, error) {
	var rec APIKey
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get(h[:])
		if v == nil {
			return ErrNotFound
		}
		var err error
		rec, err = decodeKey(h, v)
		return err
	})
	if err != nil {
		return APIKey{}, fmt.Errorf("key by hash: %w", err)
	}
	return rec, nil
}

// decodeKey restores a key record, whose hash lives in the bbolt key.
func decodeKey(h [32]byte, v []byte) (APIKey, error) {
	var rec APIKey
	if err := json.Unmarshal(v, &rec); err != nil {
		return APIKey{}, fmt.Errorf("decode key record: %w", err)
	}
	rec.Hash = h
	if rec.Prefix == "" {
		// Records written before prefixes were kept: the hint starts with it.
		rec.Prefix = keyPrefixOf(rec.Hint)
	}
	return rec, nil
}
