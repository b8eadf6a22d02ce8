package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
)

// keysAdmin sends a request to the admin API's key routes.
func keysAdmin(t *testing.T, g *gateway, method, path string, body any) (int, gjson.Result) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://"+g.admin+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, gjson.ParseBytes(out)
}

// createKey creates a key through the admin API and returns its answer.
func createKey(t *testing.T, g *gateway, body map[string]any) gjson.Result {
	t.Helper()
	status, out := keysAdmin(t, g, http.MethodPost, "/llm/keys", body)
	if status != http.StatusCreated || !keyPattern.MatchString(out.Get("key").String()) {
		t.Fatalf("creating a key %v: %d %s", body, status, out.Raw)
	}
	return out
}

// keyInList finds a key by id in a list answer.
func keyInList(list gjson.Result, id string) gjson.Result {
	for _, k := range list.Get("data").Array() {
		if k.Get("id").String() == id {
			return k
		}
	}
	return gjson.Result{}
}

// TestKeysLifecycle drives a key through the admin API on a real Caddy:
// created with a name and a model list, used, listed with its last use
// (never its secret), rotated (old secret 401, new 200) and revoked (401
// from the next request on); config keys are listed but not revoked; an
// unknown org is refused unless create_org is set.
func TestKeysLifecycle(t *testing.T) {
	g := startGateway(t)
	created := createKey(t, g, map[string]any{"org": "demo", "name": "ci", "models": []string{"demo/demo-chat"}})
	key, id := created.Get("key").String(), created.Get("id").String()
	if created.Get("org").String() != "demo" || created.Get("name").String() != "ci" || created.Get("state").String() != "active" {
		t.Fatalf("create answer: %s", created.Raw)
	}

	status, body, _ := g.do(http.MethodPost, "/chat/completions", key, chatBody("demo/demo-chat", "with a named key", ""))
	if status != http.StatusOK {
		t.Fatalf("a call with the new key: %d %s", status, body)
	}
	callID := gjson.GetBytes(body, "id").String()
	status, body, _ = g.do(http.MethodPost, "/chat/completions", key, chatBody("demo/demo-mini", "outside the key's models", ""))
	if status != http.StatusForbidden {
		t.Fatalf("a model outside the key's list: %d %s", status, body)
	}
	assertSpecError(t, body, "permission_error", "-")
	if got := g.get("/calls/"+callID, http.StatusOK).Get("key_id").String(); got != id {
		t.Fatalf("the call record names key %q, want %s", got, id)
	}

	status, list := keysAdmin(t, g, http.MethodGet, "/llm/keys?org=demo", nil)
	if status != http.StatusOK || list.Get("object").String() != "list" {
		t.Fatalf("list: %d %s", status, list.Raw)
	}
	mine := keyInList(list, id)
	if !mine.Exists() || mine.Get("name").String() != "ci" || mine.Get("last_used_at").Type == gjson.Null ||
		mine.Get("created_at").Type == gjson.Null || mine.Get("models.0").String() != "demo/demo-chat" || mine.Get("key").Exists() {
		t.Fatalf("the new key in the list: %s", mine.Raw)
	}
	secret := strings.TrimPrefix(key, "mg_live_")
	if strings.Contains(list.Raw, secret) || strings.Contains(list.Raw, strings.TrimPrefix(demoKey, "mg_live_")) {
		t.Fatalf("the list shows a secret: %s", list.Raw)
	}
	var cfgID string
	for _, k := range list.Get("data").Array() {
		if k.Get("source").String() == "config" {
			cfgID = k.Get("id").String()
			if k.Get("last_used_at").Type == gjson.Null {
				t.Fatalf("the config key was used by this test and shows no last use: %s", k.Raw)
			}
		}
	}
	if !strings.HasPrefix(cfgID, "key_cfg_") {
		t.Fatalf("the demo org's config key is not listed: %s", list.Raw)
	}
	if status, out := keysAdmin(t, g, http.MethodDelete, "/llm/keys/"+cfgID, nil); status != http.StatusConflict ||
		!strings.Contains(out.Get("error").String(), "config") {
		t.Fatalf("revoking a config key: %d %s", status, out.Raw)
	}

	status, rotated := keysAdmin(t, g, http.MethodPost, "/llm/keys/"+id+"/rotate", nil)
	newKey := rotated.Get("key").String()
	if status != http.StatusOK || !keyPattern.MatchString(newKey) || newKey == key || rotated.Get("id").String() != id {
		t.Fatalf("rotate: %d %s", status, rotated.Raw)
	}
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", key, chatBody("demo/demo-chat", "old secret", "")); status != http.StatusUnauthorized {
		t.Fatalf("the old secret after rotation: %d %s", status, body)
	}
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", newKey, chatBody("demo/demo-chat", "new secret", "")); status != http.StatusOK {
		t.Fatalf("the new secret after rotation: %d %s", status, body)
	}

	status, revoked := keysAdmin(t, g, http.MethodDelete, "/llm/keys/"+id, nil)
	if status != http.StatusOK || revoked.Get("state").String() != "revoked" || revoked.Get("revoked_at").Type == gjson.Null {
		t.Fatalf("revoke: %d %s", status, revoked.Raw)
	}
	status, body, _ = g.do(http.MethodPost, "/chat/completions", newKey, chatBody("demo/demo-chat", "revoked", ""))
	if status != http.StatusUnauthorized || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "revoked") {
		t.Fatalf("a revoked key: %d %s", status, body)
	}
	if status, _ := keysAdmin(t, g, http.MethodDelete, "/llm/keys/key_nosuchkey", nil); status != http.StatusNotFound {
		t.Fatalf("revoking an unknown key: %d", status)
	}

	// A mistyped org is not created behind the operator's back.
	status, out := keysAdmin(t, g, http.MethodPost, "/llm/keys", map[string]any{"org": "dmeo"})
	if status != http.StatusNotFound || !strings.Contains(out.Get("error").String(), `"dmeo"`) ||
		!strings.Contains(out.Get("error").String(), "demo") || !strings.Contains(out.Get("error").String(), "--create-org") {
		t.Fatalf("an unknown org: %d %s", status, out.Raw)
	}
	if status, _ := keysAdmin(t, g, http.MethodGet, "/llm/keys?org=dmeo", nil); status != http.StatusNotFound {
		t.Fatalf("listing an unknown org: %d", status)
	}
	fresh := createKey(t, g, map[string]any{"org": "fresh", "create_org": true})
	if fresh.Get("org").String() != "fresh" {
		t.Fatalf("create_org: %s", fresh.Raw)
	}
	if status, out := keysAdmin(t, g, http.MethodPost, "/llm/keys", map[string]any{"org": "demo", "models": []string{"demo/nope"}}); status != http.StatusBadRequest ||
		!strings.Contains(out.Get("error").String(), "demo/nope") {
		t.Fatalf("an unknown model: %d %s", status, out.Raw)
	}
	if status, out := keysAdmin(t, g, http.MethodPost, "/llm/keys", map[string]any{"org": "other", "models": []string{"demo/demo-mini"}}); status != http.StatusBadRequest {
		t.Fatalf("a model outside the org's models: %d %s", status, out.Raw)
	}
}

// TestKeysCLICreateOrgGuard runs the registered `caddy llm keys create`
// command against the running admin API: a mistyped org is an error that
// names it and the known orgs, and --create-org creates it.
func TestKeysCLICreateOrgGuard(t *testing.T) {
	g := startGateway(t)
	run := func(args ...string) (string, error) {
		llm, ok := caddycmd.Commands()["llm"]
		if !ok {
			t.Fatal("the llm command is not registered")
		}
		root := &cobra.Command{Use: "caddy", SilenceUsage: true, SilenceErrors: true}
		cmd := &cobra.Command{Use: "llm"}
		llm.CobraFunc(cmd)
		root.AddCommand(cmd)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(io.Discard)
		root.SetArgs(append(append([]string{"llm"}, args...), "--address", g.admin))
		err := root.Execute()
		return out.String(), err
	}
	_, err := run("keys", "create", "--org", "acmee")
	if err == nil || !strings.Contains(err.Error(), `"acmee" does not exist`) || !strings.Contains(err.Error(), "demo, other") {
		t.Fatalf("an unknown org: %v", err)
	}
	out, err := run("keys", "create", "--org", "acmee", "--create-org", "--name", "first", "--budget-day", "1")
	key := strings.TrimSpace(out)
	if err != nil || !keyPattern.MatchString(key) {
		t.Fatalf("--create-org: %q, %v", out, err)
	}
	out, err = run("keys", "list", "--org", "acmee")
	if err != nil || !strings.Contains(out, "first") || !strings.Contains(out, "0/1 day") || strings.Contains(out, strings.TrimPrefix(key, "mg_live_")) {
		t.Fatalf("list: %q, %v", out, err)
	}
}

// TestKeysExpiry: a key works until its expiry and is refused after it.
func TestKeysExpiry(t *testing.T) {
	g := startGateway(t)
	long := createKey(t, g, map[string]any{"org": "demo", "expires_in": "1h"})
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", long.Get("key").String(), chatBody("demo/demo-chat", "hi", "")); status != http.StatusOK {
		t.Fatalf("a key an hour before its expiry: %d %s", status, body)
	}
	short := createKey(t, g, map[string]any{"org": "demo", "expires_in": "1s"})
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, body, _ := g.do(http.MethodGet, "/models", short.Get("key").String(), nil)
		if status == http.StatusUnauthorized {
			if !strings.Contains(gjson.GetBytes(body, "error.message").String(), "expired") {
				t.Fatalf("an expired key: %s", body)
			}
			break
		}
		if status != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a key past its expiry: %d %s", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	status, list := keysAdmin(t, g, http.MethodGet, "/llm/keys?org=demo", nil)
	if k := keyInList(list, short.Get("id").String()); status != http.StatusOK || k.Get("state").String() != "expired" {
		t.Fatalf("the expired key in the list: %d %s", status, k.Raw)
	}
	if status, out := keysAdmin(t, g, http.MethodPost, "/llm/keys", map[string]any{"org": "demo", "expires_in": "soon"}); status != http.StatusBadRequest {
		t.Fatalf("a bad expires_in: %d %s", status, out.Raw)
	}
}

// TestKeysBudget: concurrent calls of a key with a small daily budget are
// refused with 429 budget_exceeded once it is spent, and what the key was
// charged never passes it; the org's other keys go on.
func TestKeysBudget(t *testing.T) {
	g := startGateway(t)
	const budget = 0.0005
	k := createKey(t, g, map[string]any{"org": "demo", "budget": map[string]any{"day_usd": budget}})
	key, id := k.Get("key").String(), k.Get("id").String()
	var (
		mu       sync.Mutex
		ok, over int
		refusal  []byte
		header   http.Header
	)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				status, body, h := g.do(http.MethodPost, "/chat/completions", key,
					chatBody("demo/demo-chat", fmt.Sprintf("budget %d %d", w, i), `"max_tokens":64`))
				mu.Lock()
				switch status {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests:
					over++
					refusal, header = body, h
				default:
					t.Errorf("status %d: %s", status, body)
				}
				mu.Unlock()
				if status != http.StatusOK {
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d calls served, %d refused", ok, over)
	if ok == 0 || over == 0 {
		t.Fatalf("%d calls served and %d refused: the test did not reach the budget", ok, over)
	}
	e := gjson.GetBytes(refusal, "error")
	if e.Get("type").String() != "insufficient_quota" || e.Get("code").String() != "budget_exceeded" ||
		!strings.Contains(e.Get("message").String(), "budget") || header.Get("Retry-After") == "" {
		t.Fatalf("the refusal: %s (Retry-After %q)", refusal, header.Get("Retry-After"))
	}
	status, list := keysAdmin(t, g, http.MethodGet, "/llm/keys?org=demo", nil)
	mine := keyInList(list, id)
	if status != http.StatusOK || mine.Get("budget.day_usd").Float() != budget {
		t.Fatalf("the key in the list: %d %s", status, mine.Raw)
	}
	t.Logf("the key spent %v USD", mine.Get("spent.day_usd").Float())
	if spent := mine.Get("spent.day_usd").Float(); spent <= 0 || spent > budget {
		t.Fatalf("the key spent %v USD of its %v USD budget", spent, budget)
	}
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", demoKey, chatBody("demo/demo-chat", "another key", `"max_tokens":64`)); status != http.StatusOK {
		t.Fatalf("another key of the org: %d %s", status, body)
	}
}

// TestKeysAdminKey: an org's admin key lists, creates, rotates and revokes
// its own org's keys over /v1/keys, never another org's; other keys get
// 403.
func TestKeysAdminKey(t *testing.T) {
	g := startGateway(t)
	adm := createKey(t, g, map[string]any{"org": "demo", "admin": true, "name": "admin"})
	admKey := adm.Get("key").String()
	foreign := createKey(t, g, map[string]any{"org": "other"})

	status, body, _ := g.do(http.MethodGet, "/keys", demoKey, nil)
	if status != http.StatusForbidden {
		t.Fatalf("a key that is not an admin key listing keys: %d %s", status, body)
	}
	assertSpecError(t, body, "permission_error", "")

	status, body, _ = g.do(http.MethodPost, "/keys", admKey, `{"name":"made by admin","budget":{"month_usd":2}}`)
	if status != http.StatusCreated {
		t.Fatalf("an admin key creating a key: %d %s", status, body)
	}
	made := gjson.ParseBytes(body)
	madeKey, madeID := made.Get("key").String(), made.Get("id").String()
	if made.Get("org_id").String() != adm.Get("org_id").String() || !keyPattern.MatchString(madeKey) {
		t.Fatalf("the key made by the admin key: %s", body)
	}
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", madeKey, chatBody("demo/demo-chat", "hi", "")); status != http.StatusOK {
		t.Fatalf("the key made by the admin key: %d %s", status, body)
	}

	status, body, _ = g.do(http.MethodGet, "/keys?limit=1", admKey, nil)
	list := gjson.ParseBytes(body)
	if status != http.StatusOK || list.Get("object").String() != "list" || !list.Get("has_more").Bool() || strings.Contains(string(body), `"key":`) {
		t.Fatalf("an admin key listing keys: %d %s", status, body)
	}
	status, body, _ = g.do(http.MethodGet, "/keys?cursor="+list.Get("next_cursor").String(), admKey, nil)
	if status != http.StatusOK || !keyInList(gjson.ParseBytes(body), adm.Get("id").String()).Exists() {
		t.Fatalf("the next page: %d %s", status, body)
	}
	if keyInList(list, foreign.Get("id").String()).Exists() {
		t.Fatal("the list shows another org's key")
	}

	for _, tt := range []struct{ method, path, body string }{
		{http.MethodDelete, "/keys/" + foreign.Get("id").String(), ""},
		{http.MethodPost, "/keys/" + foreign.Get("id").String() + "/rotate", ""},
		{http.MethodGet, "/keys/" + foreign.Get("id").String(), ""},
		{http.MethodPost, "/keys", `{"org":"other"}`},
	} {
		var b any
		if tt.body != "" {
			b = tt.body
		}
		status, body, _ := g.do(tt.method, tt.path, admKey, b)
		if status != http.StatusForbidden {
			t.Fatalf("%s %s of another org: %d %s", tt.method, tt.path, status, body)
		}
		assertSpecError(t, body, "permission_error", "-")
	}
	if status, body, _ := g.do(http.MethodPost, "/chat/completions", foreign.Get("key").String(), chatBody("demo/demo-chat", "still here", "")); status != http.StatusOK {
		t.Fatalf("the other org's key after the refusals: %d %s", status, body)
	}

	status, body, _ = g.do(http.MethodPost, "/keys/"+madeID+"/rotate", admKey, nil)
	rotated := gjson.GetBytes(body, "key").String()
	if status != http.StatusOK || !keyPattern.MatchString(rotated) {
		t.Fatalf("an admin key rotating its org's key: %d %s", status, body)
	}
	if status, _, _ := g.do(http.MethodGet, "/models", madeKey, nil); status != http.StatusUnauthorized {
		t.Fatalf("the old secret after rotation over the API: %d", status)
	}
	status, body, _ = g.do(http.MethodDelete, "/keys/"+madeID, admKey, nil)
	if status != http.StatusOK || gjson.GetBytes(body, "state").String() != "revoked" {
		t.Fatalf("an admin key revoking its org's key: %d %s", status, body)
	}
	if status, _, _ := g.do(http.MethodGet, "/models", rotated, nil); status != http.StatusUnauthorized {
		t.Fatalf("a key revoked over the API: %d", status)
	}
	var cfgID string
	for _, k := range list.Get("data").Array() {
		if k.Get("source").String() == "config" {
			cfgID = k.Get("id").String()
		}
	}
	if cfgID == "" {
		t.Fatalf("the first page does not list the config key: %s", list.Raw)
	}
	if status, body, _ := g.do(http.MethodDelete, "/keys/"+cfgID, admKey, nil); status != http.StatusConflict {
		t.Fatalf("revoking a config key over the API: %d %s", status, body)
	}
	if status, body, _ := g.do(http.MethodPut, "/keys", admKey, nil); status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT /keys: %d %s", status, body)
	}
}
