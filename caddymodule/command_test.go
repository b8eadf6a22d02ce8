package caddymodule

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestKeysCreateCommand runs the CLI subcommand against an admin endpoint
// and checks it asks for the org's key and prints the key alone on stdout.
func TestKeysCreateCommand(t *testing.T) {
	var gotOrg string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/llm/keys" {
			http.Error(w, "wrong route", http.StatusNotFound)
			return
		}
		var req struct{ Org string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		gotOrg = req.Org
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"key":"mg_live_abcdefghijklmnopqrstuvwxyz012345","id":"key_1","org_id":"org_1","org":"acme","hint":"mg_live_...2345"}`))
	}))
	defer admin.Close()

	root := &cobra.Command{Use: "caddy"}
	cmd := &cobra.Command{Use: "llm"}
	registerLLMCommand(cmd)
	root.AddCommand(cmd)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"llm", "keys", "create", "--org", "acme", "--address", strings.TrimPrefix(admin.URL, "http://")})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if gotOrg != "acme" {
		t.Fatalf("org sent: %q", gotOrg)
	}
	if out.String() != "mg_live_abcdefghijklmnopqrstuvwxyz012345\n" {
		t.Fatalf("stdout %q", out.String())
	}
	root.SetArgs([]string{"llm", "keys", "create", "--address", "127.0.0.1:1"})
	if err := root.Execute(); err == nil {
		t.Fatal("no --org accepted")
	}
}
