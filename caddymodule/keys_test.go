package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// keyTestApp is an App with an open store and nothing else, for the
// authentication path.
func keyTestApp(t *testing.T) (*App, *reliability.BoltStore, reliability.Org) {
	t.Helper()
	st, err := reliability.OpenBolt(filepath.Join(t.TempDir(), "gateway.db"), reliability.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	a := &App{KeyPrefix: "mg", logger: zap.NewNop(), rt: new(runtimeState),
		orgModels: map[string]map[string]bool{"acme": {"m1": true, "m2": true}}}
	a.rt.store.Store(st)
	org, err := st.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	return a, st, org
}

// TestRevokeAndRotateTakeEffectOnTheNextRequest: a key cached by
// authenticate is refused from the first request after its revocation,
// and a rotated key's old secret from the first request after rotation.
func TestRevokeAndRotateTakeEffectOnTheNextRequest(t *testing.T) {
	a, st, org := keyTestApp(t)
	key, rec, err := st.CreateKeyWith(org.ID, "mg", reliability.KeyOptions{Models: []string{"m1", "other"}, Admin: true,
		Budget: &reliability.KeyBudget{DayUSD: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.authenticate(key)
	if err != nil {
		t.Fatal(err)
	}
	if !p.admin || p.budget == nil || p.budget.DayUSD != 1 || p.keyID != rec.ID || !p.mayUse("m1") || p.mayUse("m2") || p.mayUse("other") {
		t.Fatalf("principal %+v: want admin, the budget, and models m1 only (the key's within the org's)", p)
	}
	if again, err := a.authenticate(key); err != nil || again != p {
		t.Fatalf("second request: %v, %v; want the cached principal", again, err)
	}
	if last, _ := st.KeyLastUsed(rec.ID); last == nil {
		t.Fatal("authenticating did not note the key's use")
	}

	newKey, _, err := st.RotateKey(rec.ID, "mg", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.authenticate(key); !errors.Is(err, errBadKey) {
		t.Fatalf("the old secret after rotation: %v", err)
	}
	if p, err := a.authenticate(newKey); err != nil || p.keyID != rec.ID {
		t.Fatalf("the new secret: %+v, %v", p, err)
	}

	if _, err := st.RevokeKey(rec.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = a.authenticate(newKey)
	if !errors.Is(err, errBadKey) || unauthorizedMessage(err) != "this API key has been revoked" {
		t.Fatalf("a revoked key: %v", err)
	}
}

// TestExpiredKeyRefused: expiry is checked at every use, cached or not.
func TestExpiredKeyRefused(t *testing.T) {
	a, st, org := keyTestApp(t)
	exp := time.Now().Add(time.Hour)
	key, _, err := st.CreateKeyWith(org.ID, "mg", reliability.KeyOptions{ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.authenticate(key)
	if err != nil || !p.expiresAt.Equal(exp) {
		t.Fatalf("before the expiry: %+v, %v", p, err)
	}
	_, err = admitKey(st, p, exp)
	if !errors.Is(err, errBadKey) || !strings.Contains(unauthorizedMessage(err), "expired at") {
		t.Fatalf("at the expiry: %v", err)
	}
	if _, err := admitKey(st, p, exp.Add(-time.Second)); err != nil {
		t.Fatalf("a second before the expiry: %v", err)
	}
}

// TestPrincipalForLoadsTheKey: a batch call runs under its key's budget
// and models; other ids act with the org's models.
func TestPrincipalForLoadsTheKey(t *testing.T) {
	a, st, org := keyTestApp(t)
	_, rec, err := st.CreateKeyWith(org.ID, "mg", reliability.KeyOptions{Models: []string{"m2"}, Budget: &reliability.KeyBudget{MonthUSD: 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := a.principalFor(org, rec.ID)
	if p.budget == nil || p.budget.MonthUSD != 3 || p.mayUse("m1") || !p.mayUse("m2") {
		t.Fatalf("principal of a stored key: %+v", p)
	}
	for _, id := range []string{"internal", "key_cfg_0123456789ab", "key_missing"} {
		if p := a.principalFor(org, id); p.budget != nil || !p.mayUse("m1") || p.keyID != id {
			t.Errorf("principal of %s: %+v", id, p)
		}
	}
}

// TestNarrowModels: a key's models narrow its org's, never widen them.
func TestNarrowModels(t *testing.T) {
	org := map[string]bool{"a": true, "b": true}
	if got := narrowModels(org, nil); len(got) != 2 {
		t.Fatalf("no key list: %v", got)
	}
	if got := narrowModels(org, []string{"b", "c"}); len(got) != 1 || !got["b"] {
		t.Fatalf("narrowed: %v", got)
	}
	if got := narrowModels(nil, []string{"c"}); len(got) != 1 || !got["c"] {
		t.Fatalf("an org with every model: %v", got)
	}
	if got := narrowModels(org, []string{"z"}); got == nil || len(got) != 0 {
		t.Fatalf("no model in common must allow none, not all: %v", got)
	}
}

// runLLM runs `caddy llm <args>` against the admin endpoint at addr.
func runLLM(t *testing.T, addr string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := &cobra.Command{Use: "caddy", SilenceUsage: true, SilenceErrors: true}
	cmd := &cobra.Command{Use: "llm"}
	registerLLMCommand(cmd)
	root.AddCommand(cmd)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(append([]string{"llm"}, args...), "--address", addr))
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// TestKeysCommands runs `caddy llm keys list|create|revoke|rotate` against
// a fake admin endpoint: each asks for the right route with the flags'
// values, prints the secret only where one is made, and passes the admin
// API's refusal on (an unknown org without --create-org).
func TestKeysCommands(t *testing.T) {
	var got struct {
		method, path, query string
		body                map[string]any
	}
	created := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.query, got.body = r.Method, r.URL.Path, r.URL.RawQuery, nil
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &got.body)
		info := reliability.KeyInfo{Object: "api_key", ID: "key_1", OrgID: "org_1", Name: "ci", Hint: "mg_live_2345", Source: "store",
			State: "active", CreatedAt: &created, Budget: &reliability.KeyBudget{DayUSD: 5}, Spent: &reliability.KeySpent{DayUSD: 1.25},
			Models: []string{"m1"}}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/llm/keys":
			if got.body["org"] == "acm" && got.body["create_org"] != true {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"error":"org \"acm\" does not exist (known orgs: acme); to create it with the key, pass --create-org (\"create_org\": true)"}`))
				return
			}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(keyAnswer{KeyInfo: info, Org: "acme", Key: "mg_live_abcdefghijklmnopqrstuvwxyz012345"})
		case r.Method == http.MethodGet && r.URL.Path == "/llm/keys":
			_ = json.NewEncoder(w).Encode(reliability.Page[reliability.KeyInfo]{Object: "list", Data: []reliability.KeyInfo{info}})
		case r.Method == http.MethodDelete && r.URL.Path == "/llm/keys/key_1":
			now := created.Add(time.Hour)
			info.State, info.RevokedAt = "revoked", &now
			_ = json.NewEncoder(w).Encode(keyAnswer{KeyInfo: info, Org: "acme"})
		case r.Method == http.MethodPost && r.URL.Path == "/llm/keys/key_1/rotate":
			_ = json.NewEncoder(w).Encode(keyAnswer{KeyInfo: info, Org: "acme", Key: "mg_live_rotatedrotatedrotatedrotated00"})
		default:
			http.Error(w, `{"error":"wrong route"}`, http.StatusNotFound)
		}
	}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")

	out, _, err := runLLM(t, addr, "keys", "create", "--org", "acme", "--name", "ci", "--admin", "--expires", "720h",
		"--budget-day", "5", "--budget-month", "50", "--models", "m1,m2")
	if err != nil {
		t.Fatal(err)
	}
	if out != "mg_live_abcdefghijklmnopqrstuvwxyz012345\n" {
		t.Fatalf("create printed %q", out)
	}
	body, _ := json.Marshal(got.body)
	want := `{"admin":true,"budget":{"day_usd":5,"month_usd":50},"expires_in":"720h","models":["m1","m2"],"name":"ci","org":"acme"}`
	if string(body) != want {
		t.Fatalf("create sent %s, want %s", body, want)
	}

	_, _, err = runLLM(t, addr, "keys", "create", "--org", "acm")
	if err == nil || !strings.Contains(err.Error(), `org "acm" does not exist`) || !strings.Contains(err.Error(), "--create-org") {
		t.Fatalf("an unknown org: %v", err)
	}
	if _, _, err := runLLM(t, addr, "keys", "create", "--org", "acm", "--create-org"); err != nil || got.body["create_org"] != true {
		t.Fatalf("--create-org: %v, sent %v", err, got.body)
	}

	out, _, err = runLLM(t, addr, "keys", "list", "--org", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.query != "limit=200&org=acme" {
		t.Fatalf("list asked for %q", got.query)
	}
	for _, want := range []string{"ID", "LAST USED", "key_1", "ci", "mg_live_2345", "active", "1.25/5 day", "m1"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "abcdefghij") {
		t.Fatalf("list shows a secret:\n%s", out)
	}

	out, _, err = runLLM(t, addr, "keys", "revoke", "key_1")
	if err != nil || got.method != http.MethodDelete || !strings.Contains(out, "revoked key key_1") {
		t.Fatalf("revoke: %v, %s %s, printed %q", err, got.method, got.path, out)
	}
	out, _, err = runLLM(t, addr, "keys", "rotate", "key_1")
	if err != nil || out != "mg_live_rotatedrotatedrotatedrotated00\n" {
		t.Fatalf("rotate: %v, printed %q", err, out)
	}
	if _, _, err := runLLM(t, addr, "keys", "revoke"); err == nil {
		t.Fatal("revoke without an id accepted")
	}
	if _, _, err := runLLM(t, addr, "keys", "list"); err == nil {
		t.Fatal("list without --org accepted")
	}
}
