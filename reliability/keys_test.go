package reliability

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestGenerateKeyFormat(t *testing.T) {
	re := regexp.MustCompile(`^mg_live_[0-9A-Za-z]{32}$`)
	seen := map[string]bool{}
	used := map[rune]bool{}
	for range 1000 {
		key, err := GenerateKey("mg")
		if err != nil {
			t.Fatal(err)
		}
		if !re.MatchString(key) {
			t.Fatalf("GenerateKey = %q, want %s", key, re)
		}
		if seen[key] {
			t.Fatalf("duplicate key %q", key)
		}
		seen[key] = true
		for _, r := range strings.TrimPrefix(key, "mg_live_") {
			used[r] = true
		}
	}
	// 32000 draws from 62 characters: every one must show up.
	if len(used) != 62 {
		t.Fatalf("keys use %d of the 62 base62 characters", len(used))
	}
}

func TestGenerateKeyRejectsAmbiguousPrefix(t *testing.T) {
	for _, prefix := range []string{"", "a_b", "a b", "x_live_", "é"} {
		if key, err := GenerateKey(prefix); err == nil {
			t.Errorf("GenerateKey(%q) = %q, want an error", prefix, key)
		}
	}
	if _, err := GenerateKey("sk-mg2"); err != nil {
		t.Errorf("GenerateKey(sk-mg2): %v", err)
	}
}

func TestHashKey(t *testing.T) {
	h := HashKey("abc")
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := hex.EncodeToString(h[:]); got != want {
		t.Fatalf("HashKey(abc) = %s, want SHA-256 %s", got, want)
	}
}

func TestKeyHint(t *testing.T) {
	tests := []struct{ key, want string }{
		{"mg_live_0123456789abcdefghijklmnopqrstuv", "mg_live_stuv"},
		{"sk-mg_live_ABCDEFGHIJ", "sk-mg_live_GHIJ"},
		{"mg_live_abcd", "mg_live_"},
		{"opaque-secret-text", "text"},
		{"short", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := KeyHint(tt.key); got != tt.want {
			t.Errorf("KeyHint(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestCreateKeyStoresOnlyTheHash(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	key, rec, err := s.CreateKey(org.ID, "mg")
	if err != nil {
		t.Fatal(err)
	}
	if rec.OrgID != org.ID || rec.Hash != HashKey(key) || rec.Hint != KeyHint(key) || !strings.HasPrefix(rec.ID, "key_") {
		t.Fatalf("CreateKey record = %+v", rec)
	}
	got, err := s.KeyByHash(HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != rec.ID || got.OrgID != org.ID || got.Hash != rec.Hash || got.Hint != rec.Hint || !got.CreatedAt.Equal(rec.CreatedAt) {
		t.Fatalf("KeyByHash = %+v, want %+v", got, rec)
	}
	if _, err := s.KeyByHash(HashKey(key + "x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("KeyByHash of an unknown key: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateKey("org_missing", "mg"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("CreateKey for a missing org: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateKey(org.ID, "bad prefix"); err == nil {
		t.Fatal("CreateKey with a bad prefix succeeded")
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimPrefix(key, "mg_live_")
	if bytes.Contains(file, []byte(secret)) {
		t.Fatal("the store file contains the key's secret")
	}
}

func TestAddKey(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	const key = "demo_live_configuredkey0000000000000000"
	first, err := s.AddKey(a.ID, key)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AddKey(a.ID, key)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Fatalf("adding the same key twice made two records: %s, %s", first.ID, again.ID)
	}
	if _, err := s.AddKey(b.ID, key); !errors.Is(err, ErrConflict) {
		t.Fatalf("adding a key of org a to org b: %v, want ErrConflict", err)
	}
	if _, err := s.AddKey(a.ID, ""); err == nil {
		t.Fatal("AddKey accepted an empty key")
	}
	got, err := s.KeyByHash(HashKey(key))
	if err != nil || got.OrgID != a.ID {
		t.Fatalf("KeyByHash = %+v, %v", got, err)
	}
}
