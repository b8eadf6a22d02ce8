package caddymodule

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// Secrets the gateway knows in plain text are the provider credentials and
// the values of providers' configured headers. Clients' keys are only ever
// known as hashes; log lines are kept free of them by header name (see
// RedactEncoder) and by their shape (<prefix>_live_<random>).

// minSecretLen is the shortest value treated as a secret: shorter values
// (a header such as "1") would redact ordinary words.
const minSecretLen = 8

var (
	secretsMu sync.Mutex
	// secrets is every registered secret, longest first, so that a secret
	// that contains another is replaced whole. Readers load it without a
	// lock; it only grows, and is never mutated in place.
	secrets atomic.Pointer[[]string]
)

// registerSecrets records values that must never be written to a log line.
// Values from every config this process has loaded are kept: an old
// config's handlers may still log while a reload finishes.
func registerSecrets(vals ...string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	var cur []string
	if p := secrets.Load(); p != nil {
		cur = *p
	}
	next := cur
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen || slices.Contains(next, v) {
			continue
		}
		if len(next) == len(cur) {
			next = slices.Clone(cur)
		}
		next = append(next, v)
	}
	if len(next) == len(cur) {
		return
	}
	slices.SortFunc(next, func(a, b string) int { return len(b) - len(a) })
	secrets.Store(&next)
}

// knownSecrets returns the registered secrets, longest first.
func knownSecrets() []string {
	if p := secrets.Load(); p != nil {
		return *p
	}
	return nil
}

// redactedText replaces a secret in text.
const redactedText = "[redacted]"

// credentialPatterns match things that look like credentials or provider
// account ids in text the gateway did not write itself (an upstream's error
// message, a log line): gateway keys, provider keys whole or masked
// ("sk-abc...xyz", "sk-ant-***"), bearer tokens, and OpenAI/Anthropic style
// organisation, project and user ids.
var credentialPatterns = regexp.MustCompile(
	`[A-Za-z0-9]+_live_[A-Za-z0-9_-]{4,}` +
		`|\bsk-[A-Za-z0-9_*.\x{2026}-]{2,}[A-Za-z0-9_*\x{2026}-]` +
		`|\b[A-Za-z0-9_-]{2,}(?:\*{2,}|\x{2026})[A-Za-z0-9_-]*` +
		`|(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}` +
		`|\b(?:org|proj|user|acct|workspace)[-_][A-Za-z0-9]{6,}`)

// scrubText removes the registered secrets and anything shaped like a
// credential or an account id from s.
func scrubText(s string) string {
	for _, sec := range knownSecrets() {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, redactedText)
		}
	}
	return credentialPatterns.ReplaceAllStringFunc(s, func(m string) string {
		if accountPrefix.MatchString(m) && !strings.ContainsAny(m[strings.IndexAny(m, "-_"):], "0123456789") {
			return m // a word such as "user_message", not an id
		}
		return redactedText
	})
}

// accountPrefix tells the account-id alternative of credentialPatterns
// apart from the others.
var accountPrefix = regexp.MustCompile(`^(?:org|proj|user|acct|workspace)[-_]`)

// scrubLogBytes removes the registered secrets and gateway keys from an
// encoded log line. It returns b itself when there is nothing to remove,
// which is nearly always: the common case costs a few byte searches.
func scrubLogBytes(b []byte) ([]byte, bool) {
	changed := false
	for _, sec := range knownSecrets() {
		if bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(redactedText))
			changed = true
		}
	}
	if bytes.Contains(b, []byte("_live_")) {
		if out := gatewayKeyPattern.ReplaceAll(b, []byte(redactedText)); !bytes.Equal(out, b) {
			b, changed = out, true
		}
	}
	return b, changed
}

// gatewayKeyPattern matches a gateway API key in text.
var gatewayKeyPattern = regexp.MustCompile(`[A-Za-z0-9]+_live_[A-Za-z0-9_-]{4,}`)

// defaultSecretHeaders are the request and response headers that carry
// credentials: their values are never logged.
var defaultSecretHeaders = []string{
	"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key",
	"Cookie", "Set-Cookie", "Openai-Organization", "Openai-Project", "Anthropic-Organization-Id",
}

// secretHeaders is the set of header names (lower case) whose values are
// redacted from log lines: the defaults, and those configs add with
// redact_headers.
var secretHeaders atomic.Pointer[map[string]bool]

func init() {
	m := make(map[string]bool, len(defaultSecretHeaders))
	for _, h := range defaultSecretHeaders {
		m[strings.ToLower(h)] = true
	}
	secretHeaders.Store(&m)
}

// registerSecretHeaders adds header names to the redacted set.
func registerSecretHeaders(names ...string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	cur := *secretHeaders.Load()
	var next map[string]bool
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" || cur[n] || next[n] {
			continue
		}
		if next == nil {
			next = make(map[string]bool, len(cur)+len(names))
			for k := range cur {
				next[k] = true
			}
		}
		next[n] = true
	}
	if next != nil {
		secretHeaders.Store(&next)
	}
}

// isSecretHeader reports whether the values of header name are redacted.
func isSecretHeader(name string, extra map[string]bool) bool {
	l := strings.ToLower(name)
	return (*secretHeaders.Load())[l] || extra[l]
}

// redactHeader returns a copy of h with the values of secret headers
// replaced.
func redactHeader(h http.Header, extra map[string]bool) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if isSecretHeader(k, extra) {
			v = []string{"REDACTED"}
		}
		out[k] = v
	}
	return out
}

// warnPlainSecrets logs a warning for each secret written in the config
// in plain text: Caddy's admin API serves the config (GET /config/) and
// autosaves it. The Caddyfile never produces one (it hashes `key` and
// refuses literal api_key and password values); a JSON config can.
func (a *App) warnPlainSecrets() {
	for _, oc := range a.Orgs {
		if len(oc.Keys) > 0 {
			a.logger.Warn("org keys are written in the config in plain text, where the admin API and the autosave show them; use key_hashes",
				zap.String("org", oc.Name))
		}
	}
	for _, pc := range a.Providers {
		if pc.APIKey != "" && !isSecretRef(pc.APIKey) {
			a.logger.Warn("a provider's api_key is written in the config in plain text, where the admin API and the autosave show it; use api_key_env or {env.VAR}",
				zap.String("provider", pc.Name))
		}
	}
	if a.SMTP != nil && a.SMTP.Password != "" && !isSecretRef(a.SMTP.Password) {
		a.logger.Warn("the smtp password is written in the config in plain text, where the admin API and the autosave show it; use password_env or {env.VAR}")
	}
}
