package integration

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/demoupstream"
	"github.com/modelgate/gateway/reliability"
)

// TestProductionHTTPS runs Caddyfile.production as written, with what a
// test machine cannot have swapped for what it can: `local_certs` (Caddy's
// own CA, as `tls internal` would) for ACME, free ports for 80 and 443, the
// domain "localhost", and temporary directories. It checks HTTPS with
// HTTP/2 and HTTP/3 for a client that trusts Caddy's local CA, the redirect
// from HTTP, the admin API on its unix socket only (keys created, a backup
// taken and the server stopped through it with the CLI), the access log
// with the gateway's fields and without the key an Anthropic client sends,
// and the error that names the credential a switched-off provider needs.
func TestProductionHTTPS(t *testing.T) {
	root := repoRoot(t)
	bin := caddyBinary(t)
	dir := t.TempDir()
	home, state, run, logs := filepath.Join(dir, "home"), filepath.Join(dir, "state"), filepath.Join(dir, "run"), filepath.Join(dir, "logs")
	for _, d := range []string{home, state, run, logs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "Caddyfile.production"))
	if err != nil {
		t.Fatal(err)
	}
	httpPort, httpsPort := freePort(t), freePort(t)
	cfg, ok := insertGlobalOptions(string(src), fmt.Sprintf("local_certs\nskip_install_trust\nhttp_port %d\nhttps_port %d", httpPort, httpsPort))
	if !ok {
		t.Fatal("Caddyfile.production has no global options block")
	}
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile.production"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// A local model server stands in for LOCAL_LLM_BASE_URL; the real
	// providers stay switched off.
	upstream := httptest.NewServer(demoupstream.New(demoupstream.Config{}))
	t.Cleanup(upstream.Close)
	env := childEnv(home, "GATEWAY_DOMAIN=localhost", "LOCAL_LLM_BASE_URL="+upstream.URL+"/v1",
		"STATE_DIRECTORY="+state, "RUNTIME_DIRECTORY="+run, "LOGS_DIRECTORY="+logs)
	p := startProcess(t, dir, env, bin, "run", "--config", "Caddyfile.production")

	// Caddy makes its local CA at start; the client trusts its root.
	rootCert := filepath.Join(home, "data", "caddy", "pki", "authorities", "local", "root.crt")
	var pool *x509.CertPool
	eventuallyFor(t, 60*time.Second, "Caddy's local CA", func() error {
		if p.exited() {
			t.Fatalf("caddy exited: %v\n%s", p.err, p.out.String())
		}
		pem, err := os.ReadFile(rootCert)
		if err != nil {
			return err
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return errors.New("no certificate in " + rootCert)
		}
		return nil
	})
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
	base := fmt.Sprintf("https://localhost:%d/v1", httpsPort)
	waitStatus(t, p, h2, base+"/models", http.StatusUnauthorized)

	// The admin API is the unix socket, for the service's user and group.
	sock := filepath.Join(run, "admin.sock")
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o660 {
		t.Fatalf("admin socket %s: %v %v, want a socket with mode 0660", sock, fi, err)
	}
	key := strings.TrimSpace(runCommand(t, dir, env, bin, "llm", "keys", "create", "--org", "acme", "--config", "Caddyfile.production"))
	if !keyPattern.MatchString(key) {
		t.Fatalf("keys create printed %q", key)
	}

	call := func(c *http.Client, path, body string, header ...string) (*http.Response, gjson.Result) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, gjson.ParseBytes(out)
	}
	resp, ans := call(h2, "/chat/completions", chatBody("local/llama3.1", "hello over https", ""))
	if resp.StatusCode != http.StatusOK || ans.Get("choices.0.message.content").String() != "Echo: hello over https" {
		t.Fatalf("chat over HTTPS: %s %s", resp.Status, ans.Raw)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("HTTPS answered over %s, want HTTP/2", resp.Proto)
	}
	if alt := resp.Header.Get("Alt-Svc"); !strings.Contains(alt, fmt.Sprintf(`h3=":%d"`, httpsPort)) {
		t.Errorf("Alt-Svc %q does not offer HTTP/3 on port %d", alt, httpsPort)
	}
	callID := ans.Get("id").String()

	h3 := &http3.Transport{TLSClientConfig: tlsConfig}
	t.Cleanup(func() { _ = h3.Close() })
	resp, ans = call(&http.Client{Transport: h3, Timeout: 30 * time.Second}, "/chat/completions", chatBody("local/llama3.1", "hello over quic", ""))
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 3 || ans.Get("choices.0.message.content").String() != "Echo: hello over quic" {
		t.Fatalf("chat over HTTP/3: %s %s %s", resp.Proto, resp.Status, ans.Raw)
	}

	// An Anthropic client sends its key in x-api-key.
	req, _ := http.NewRequest(http.MethodPost, base+"/messages",
		strings.NewReader(`{"model":"local/llama3.1","max_tokens":50,"messages":[{"role":"user","content":"hello anthropic"}]}`))
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	if resp, err := h2.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("messages with x-api-key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// router-1 stands in for an Anthropic model, whose key is not set.
	resp, ans = call(h2, "/chat/completions", chatBody("router-1", "hi", ""))
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(ans.Get("error.message").String(), "ANTHROPIC_API_KEY") {
		t.Errorf("router-1 without ANTHROPIC_API_KEY: %s %s", resp.Status, ans.Raw)
	}

	// Plain HTTP is redirected to HTTPS.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Get(fmt.Sprintf("http://localhost:%d/v1/models", httpPort)); err != nil {
		t.Errorf("HTTP: %v", err)
	} else {
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || !strings.HasPrefix(loc, "https://localhost") {
			t.Errorf("HTTP answered %s to %q, want a redirect to HTTPS", resp.Status, loc)
		}
	}

	// The access log has the gateway's fields, and no API key.
	accessLog := filepath.Join(logs, "access.log")
	eventually(t, "the access log entry of the call", func() error {
		raw, err := os.ReadFile(accessLog)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(raw), "\n") {
			e := gjson.Parse(l)
			if e.Get("llm_provider").String() == "local" && e.Get("llm_model").String() == "local/llama3.1" &&
				e.Get("llm_tier").String() != "" && e.Get("llm_cost_usd").Exists() {
				return nil
			}
		}
		return fmt.Errorf("no entry with the gateway's fields in %s", raw)
	})
	if raw, _ := os.ReadFile(accessLog); strings.Contains(string(raw), key) || strings.Contains(string(raw), key[len(key)-12:]) {
		t.Errorf("the access log holds the API key")
	}

	// A backup through the admin socket, while serving, is a store with
	// the call in it.
	backup := filepath.Join(dir, "backup.db")
	runCommand(t, dir, env, bin, "llm", "backup", "--config", "Caddyfile.production", "--output", backup)
	st, err := reliability.OpenBolt(backup, reliability.BoltOptions{})
	if err != nil {
		t.Fatalf("the backup is not a store: %v", err)
	}
	if c, err := st.Call(callID); err != nil || c.Model != "local/llama3.1" {
		t.Errorf("the backup lacks call %s: %v", callID, err)
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}

	// caddy stop goes through the socket too.
	runCommand(t, dir, env, bin, "stop", "--config", "Caddyfile.production")
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("caddy did not stop after `caddy stop`")
	}
}

// insertGlobalOptions adds options at the top of a Caddyfile's global
// options block.
func insertGlobalOptions(src, options string) (string, bool) {
	i := strings.Index(src, "\n{\n")
	if strings.HasPrefix(src, "{\n") {
		i = -1
	} else if i < 0 {
		return "", false
	}
	at := i + len("\n{\n")
	return src[:at] + "\t" + strings.ReplaceAll(options, "\n", "\n\t") + "\n" + src[at:], true
}

// eventuallyFor is eventually with its own deadline.
func eventuallyFor(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSystemdUnit checks packaging/modelgate.service against what it runs:
// the directories systemd makes are the defaults of Caddyfile.production,
// the environment file sets only variables the config reads, and, where
// systemd-analyze is installed, the unit has no error it reports.
func TestSystemdUnit(t *testing.T) {
	root := repoRoot(t)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	unit, prod, envFile := read("packaging/modelgate.service"), read("Caddyfile.production"), read("packaging/modelgate.env")
	for _, c := range []struct{ directive, configDefault string }{
		{"StateDirectory=modelgate", "{$STATE_DIRECTORY:/var/lib/modelgate}"},
		{"RuntimeDirectory=modelgate", "{$RUNTIME_DIRECTORY:/run/modelgate}"},
		{"LogsDirectory=modelgate", "{$LOGS_DIRECTORY:/var/log/modelgate}"},
		{"ExecStart=/usr/local/bin/caddy run --config /etc/modelgate/Caddyfile", ""},
		{"EnvironmentFile=/etc/modelgate/modelgate.env", ""},
	} {
		if !strings.Contains(unit, "\n"+c.directive+"\n") {
			t.Errorf("the unit lacks %q", c.directive)
		}
		if c.configDefault != "" && !strings.Contains(prod, c.configDefault) {
			t.Errorf("Caddyfile.production does not use %s", c.configDefault)
		}
	}
	for _, l := range strings.Split(envFile, "\n") {
		name, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		if !strings.Contains(prod, "{$"+name+"}") && !strings.Contains(prod, "_env "+name) {
			t.Errorf("packaging/modelgate.env sets %s, which Caddyfile.production does not read", name)
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit's syntax is not checked")
		return
	}
	out, _ := exec.Command(analyze, "verify", filepath.Join(root, "packaging", "modelgate.service")).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		// The binary is not installed on a test machine.
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "is not executable") {
			t.Errorf("systemd-analyze verify: %s", l)
		}
	}
}
