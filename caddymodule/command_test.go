package caddymodule

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
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

// TestBackupCommand runs `caddy llm backup` against an admin endpoint: the
// copy lands in the output file, and a copy cut short of its announced
// size leaves the output as it was.
func TestBackupCommand(t *testing.T) {
	copyBytes := []byte("a bbolt file, in this test")
	cut := false
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/llm/backup" {
			http.Error(w, "wrong route", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(copyBytes)))
		if cut {
			_, _ = w.Write(copyBytes[:5])
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(copyBytes)
	}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")
	out := filepath.Join(t.TempDir(), "backup.db")

	run := func(args ...string) error {
		root := &cobra.Command{Use: "caddy"}
		cmd := &cobra.Command{Use: "llm"}
		registerLLMCommand(cmd)
		root.AddCommand(cmd)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs(append([]string{"llm", "backup"}, args...))
		return root.Execute()
	}
	if err := run("--address", addr, "--output", out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, copyBytes) {
		t.Fatalf("backup file %q, %v", got, err)
	}
	cut = true
	if err := os.WriteFile(out, []byte("the previous backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run("--address", addr, "--output", out); err == nil {
		t.Fatal("a cut copy was accepted")
	}
	if got, _ := os.ReadFile(out); string(got) != "the previous backup" {
		t.Fatalf("a cut copy replaced the previous backup: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := run("--address", addr); err == nil {
		t.Fatal("no --output accepted")
	}
}
