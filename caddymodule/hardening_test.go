package caddymodule

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"github.com/klauspost/compress/zstd"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/modelgate/gateway/translate"
)

// redactLogger is a logger writing through a RedactEncoder into buf.
func redactLogger(t *testing.T, buf *bytes.Buffer, headers ...string) *zap.Logger {
	t.Helper()
	je := &logging.JSONEncoder{}
	je.Encoder = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	enc := &RedactEncoder{Encoder: je, extra: map[string]bool{}}
	for _, h := range headers {
		enc.extra[strings.ToLower(h)] = true
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(buf), zapcore.DebugLevel))
}

// TestRedactEncoder: credential headers are redacted wherever a header map
// is logged (a request's headers, eagerly encoded context, response
// headers, a reflected http.Header), and provider secrets and gateway keys
// are replaced anywhere in the line.
func TestRedactEncoder(t *testing.T) {
	const clientKey = "mg_live_clientkey000000000000000000"
	const providerKey = "sk-test-provider-secret-123456"
	registerSecrets(providerKey)
	var buf bytes.Buffer
	log := redactLogger(t, &buf, "X-Custom-Key")

	req := httptest.NewRequest(http.MethodPost, "http://gw.test/v1/messages", nil)
	req.Header.Set("X-Api-Key", "sk-ant-not-a-gateway-key-but-secret")
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("X-Custom-Key", "custom-secret-value")
	req.Header.Set("User-Agent", "kept/1.0")
	// As the reverse proxy does: the request in the logger's context,
	// encoded when With is called.
	log.With(zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req, ShouldLogCredentials: true})).
		Warn("aborting with incomplete response", zap.Error(fmt.Errorf("upstream said %s is wrong", providerKey)))
	// As the access log does: the request as a field.
	log.Info("handled request", zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req, ShouldLogCredentials: true}),
		zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: http.Header{"Set-Cookie": {"session=abcdef123456"}}, ShouldLogCredentials: true}))
	log.Debug("reflected", zap.Any("headers", req.Header), zap.String("note", "key "+clientKey+" seen"))

	out := buf.String()
	for _, secret := range []string{clientKey, providerKey, "sk-ant-not-a-gateway-key-but-secret", "custom-secret-value", "session=abcdef123456"} {
		if strings.Contains(out, secret) {
			t.Errorf("a secret reached the log: %q in\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "kept/1.0") || !strings.Contains(out, "REDACTED") || strings.Count(out, "\n") != 3 {
		t.Fatalf("log lines:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not JSON: %s", line)
		}
	}
}

// TestRedactEncoderCaddyfile: the encoder is configured with `format
// llm_redact { wrap ...; headers ... }`.
func TestRedactEncoderCaddyfile(t *testing.T) {
	var e RedactEncoder
	d := caddyfile.NewTestDispenser(`llm_redact {
		wrap console
		headers X-A X-B
	}`)
	if err := e.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(e.WrappedRaw), `"format":"console"`) || strings.Join(e.Headers, ",") != "X-A,X-B" {
		t.Fatalf("%s %v", e.WrappedRaw, e.Headers)
	}
}

// TestScrubText: credentials, masked keys and account ids are removed
// from upstream text; ordinary words stay.
func TestScrubText(t *testing.T) {
	registerSecrets("secret-header-value-42")
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-proj-abc***************************xyz1. You can find your API key": "Incorrect API key provided: [redacted]. You can find your API key",
		"Rate limit reached for gpt-4o in organization org-AbCdEf123456 on tokens per min":                  "Rate limit reached for gpt-4o in organization [redacted] on tokens per min",
		"invalid x-api-key sk-ant-api03-AAAA-BBBB":                                                          "invalid x-api-key [redacted]",
		"bad header secret-header-value-42 sent":                                                            "bad header [redacted] sent",
		"key mg_live_abcdef0123456789abcd is revoked":                                                       "key [redacted] is revoked",
		"Authorization: Bearer abcdefgh12345678":                                                            "Authorization: [redacted]",
		"the user_message field is required; max_tokens is too large: 100000":                               "the user_message field is required; max_tokens is too large: 100000",
	} {
		if got := scrubText(in); got != want {
			t.Errorf("scrubText(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestDecodeContent: whatever content coding an upstream applies, asked
// for or not, the proxy reads the decoded body; an unknown coding is an
// error, not garbage.
func TestDecodeContent(t *testing.T) {
	const plain = `{"id":"x","choices":[]}`
	enc := map[string]func(io.Writer) io.WriteCloser{
		"gzip": func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
		"deflate": func(w io.Writer) io.WriteCloser {
			return zlib.NewWriter(w)
		},
		"zstd": func(w io.Writer) io.WriteCloser { z, _ := zstd.NewWriter(w); return z },
	}
	rawDeflate := func(w io.Writer) io.WriteCloser { f, _ := flate.NewWriter(w, 5); return f }
	cases := []struct {
		coding string
		mk     func(io.Writer) io.WriteCloser
	}{{"gzip", enc["gzip"]}, {"x-gzip", enc["gzip"]}, {"deflate", enc["deflate"]}, {"deflate", rawDeflate}, {"zstd", enc["zstd"]}}
	for _, tc := range cases {
		var b bytes.Buffer
		w := tc.mk(&b)
		_, _ = w.Write([]byte(plain))
		_ = w.Close()
		res := &http.Response{Header: http.Header{"Content-Encoding": {tc.coding}, "Content-Length": {fmt.Sprint(b.Len())}},
			Body: io.NopCloser(&b), ContentLength: int64(b.Len())}
		if err := decodeContent(res); err != nil {
			t.Fatalf("%s: %v", tc.coding, err)
		}
		got, err := io.ReadAll(res.Body)
		if err != nil || string(got) != plain || res.Header.Get("Content-Encoding") != "" || res.Header.Get("Content-Length") != "" {
			t.Fatalf("%s: %q %v %v", tc.coding, got, err, res.Header)
		}
	}
	res := &http.Response{Header: http.Header{"Content-Encoding": {"br"}}, Body: io.NopCloser(strings.NewReader("x"))}
	var cc *errContentCoding
	if err := decodeContent(res); !errors.As(err, &cc) {
		t.Fatalf("br: %v", err)
	}
}

// TestCaddyfileKeepsSecretsOut: a `key` reaches the JSON config only as
// its hash, and a provider key or SMTP password written in the Caddyfile
// is refused (placeholders are taken).
func TestCaddyfileKeepsSecretsOut(t *testing.T) {
	const key = "mg_live_demo0000000000000000000000"
	v, err := parseGlobal(caddyfile.NewTestDispenser(`llm {
		org demo {
			key `+key+`
		}
		provider p {
			dialect openai
			base_url http://127.0.0.1:9/v1
			api_key {env.GW_TEST_PROVIDER_KEY}
			header OpenAI-Organization {file./run/secrets/org}
		}
	}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := v.(httpcaddyfile.App).Value
	if bytes.Contains(raw, []byte(key)) || !bytes.Contains(raw, []byte("key_hashes")) {
		t.Fatalf("config: %s", raw)
	}
	for _, src := range []string{
		"llm {\n\tprovider p {\n\t\tapi_key sk-literal-key-1234\n\t}\n}",
		"llm {\n\tsmtp 127.0.0.1:25 {\n\t\tfrom a@b.c\n\t\tpassword hunter2hunter2\n\t}\n}",
		"llm {\n\torg o {\n\t\tkey not-a-gateway-key\n\t}\n}",
	} {
		if _, err := parseGlobal(caddyfile.NewTestDispenser(src), nil); err == nil {
			t.Errorf("accepted:\n%s", src)
		}
	}
	t.Setenv("GW_TEST_PROVIDER_KEY", "sk-from-env-0123456789")
	cat, _, err := buildCatalog([]ProviderConfig{{Name: "p", Dialect: "openai", BaseURL: "http://127.0.0.1:9/v1", APIKey: "{env.GW_TEST_PROVIDER_KEY}"}},
		[]ModelConfig{{ID: "p/m"}}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := cat.Provider("p"); p.APIKey != "sk-from-env-0123456789" {
		t.Fatalf("key %q", p.APIKey)
	}
	t.Setenv("GW_TEST_PROVIDER_KEY", "")
	_, off, err := buildCatalog([]ProviderConfig{{Name: "p", Dialect: "openai", BaseURL: "http://127.0.0.1:9/v1", APIKey: "{env.GW_TEST_PROVIDER_KEY}"}},
		[]ModelConfig{{ID: "p/m"}}, nil, 1)
	if err != nil || len(off) != 1 {
		t.Fatalf("an unset key placeholder must switch the provider off: %v %v", off, err)
	}
}

// TestParseLimitsAndRetention: the limits and retention blocks.
func TestParseLimitsAndRetention(t *testing.T) {
	v, err := parseGlobal(caddyfile.NewTestDispenser(`llm {
		limits {
			embeddings_body_size 1MiB
			api_body_size 2MiB
			max_json_depth 32
			max_json_members 1000
			max_messages 50
			max_tools 8
			max_header_size 16KiB
			max_concurrent_calls 4
			body_read_timeout 5s
		}
		retention {
			max_payload_size 64KiB
			payload_ttl 48h
			prune_interval 1m
			prune_batch 32
			max_page_size 1MiB
		}
		redact_headers X-Team-Key
		reload_drain off
	}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var app App
	if err := json.Unmarshal(v.(httpcaddyfile.App).Value, &app); err != nil {
		t.Fatal(err)
	}
	l, r := app.Limits, app.Retention
	if l.EmbeddingsBodySize != 1<<20 || l.APIBodySize != 2<<20 || l.MaxJSONDepth != 32 || l.MaxJSONMembers != 1000 || l.MaxMessages != 50 ||
		l.MaxTools != 8 || l.MaxHeaderSize != 16<<10 || l.MaxConcurrentCalls != 4 || time.Duration(l.BodyReadTimeout) != 5*time.Second {
		t.Fatalf("limits %+v", l)
	}
	if r.MaxPayloadSize != 64<<10 || time.Duration(r.PayloadTTL) != 48*time.Hour || time.Duration(r.PruneInterval) != time.Minute ||
		r.PruneBatch != 32 || r.MaxPageSize != 1<<20 {
		t.Fatalf("retention %+v", r)
	}
	if app.ReloadDrain >= 0 || len(app.RedactHeaders) != 1 {
		t.Fatalf("%+v", app)
	}
	lim, err := (*LimitsConfig)(nil).resolve(0)
	if err != nil || lim.completionBody != 32<<20 || lim.embeddingsBody != 8<<20 || lim.apiBody != 16<<20 || lim.bodyTimeout != time.Minute {
		t.Fatalf("defaults %+v %v", lim, err)
	}
	ret, err := (*RetentionConfig)(nil).resolve()
	if err != nil || ret.maxPayload != 1<<20 || ret.payloadTTL != 30*24*time.Hour || ret.maxPage != 8<<20 {
		t.Fatalf("defaults %+v %v", ret, err)
	}
}

// TestCheckShape: depth and member count are bounded before the body is
// parsed, messages and tools on what the parse counted, each with its own
// code and param.
func TestCheckShape(t *testing.T) {
	l, _ := (&LimitsConfig{MaxJSONDepth: 8, MaxJSONMembers: 100, MaxMessages: 3, MaxTools: 2}).resolve(0)
	items := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, n), ",")
	}
	tool := `{"name":"f","input_schema":{"type":"object"}}`
	for _, tc := range []struct {
		d    translate.Dialect
		body string
		code string
	}{
		{translate.Chat, `{"model":"m","messages":[` + items(3) + `]}`, ""},
		{translate.Chat, `{"model":"m","messages":[` + items(4) + `]}`, "too_many_messages"},
		{translate.Responses, `{"model":"m","input":[` + items(4) + `]}`, "too_many_messages"},
		{translate.Messages, `{"model":"m","max_tokens":5,"messages":[` + items(1) + `],"tools":[` + tool + `,` + tool + `,` + tool + `]}`, "too_many_tools"},
		{translate.Chat, `{"a":` + strings.Repeat("[", 8) + strings.Repeat("]", 8) + `}`, "json_too_deep"},
		{translate.Embeddings, `{"input":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 101), ",") + `]}`, "json_too_large"},
	} {
		e := l.checkShape([]byte(tc.body))
		if e == nil {
			var req translate.Request
			var verr *translate.ValidationError
			switch tc.d {
			case translate.Chat:
				req, verr = translate.ParseChat([]byte(tc.body))
			case translate.Messages:
				req, verr = translate.ParseMessages([]byte(tc.body))
			case translate.Responses:
				req, verr = translate.ParseResponses([]byte(tc.body))
			}
			if verr != nil {
				t.Fatalf("%.60s: %v", tc.body, verr)
			}
			e = l.checkCounts(tc.d, &req)
		}
		switch {
		case tc.code == "" && e != nil:
			t.Errorf("%.60s: %v", tc.body, e)
		case tc.code != "" && (e == nil || e.code != tc.code || e.status != http.StatusBadRequest):
			t.Errorf("%.60s: %+v, want %s", tc.body, e, tc.code)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Header.Set("X-Big", strings.Repeat("a", 2000))
	if e := checkHeaderSize(r, 1000); e == nil || e.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("header size: %+v", e)
	}
	if e := checkHeaderSize(r, 4000); e != nil {
		t.Fatalf("header size: %+v", e)
	}
}

// TestUnservedError: each kind of upstream failure gets its own status,
// type and clean message in each dialect, with Retry-After kept on 429,
// 503 and 529 only.
func TestUnservedError(t *testing.T) {
	h := func(ra string) http.Header { return http.Header{"Retry-After": {ra}} }
	for _, tc := range []struct {
		f          attemptFailure
		d          translate.Dialect
		status     int
		typ, code  string
		retryAfter string
	}{
		{failureOf(429, h("7"), nil, nil), translate.Chat, 429, "rate_limit_error", "upstream_rate_limited", "7"},
		{failureOf(503, h("3"), nil, nil), translate.Messages, 503, "api_error", "upstream_unavailable", "3"},
		{failureOf(529, h("2"), []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), nil), translate.Messages, 529, "overloaded_error", "overloaded", "2"},
		{failureOf(529, h("2"), nil, nil), translate.Chat, 503, "api_error", "upstream_overloaded", "2"},
		{failureOf(401, h("9"), nil, nil), translate.Chat, 502, "api_error", "upstream_auth_failed", ""},
		{failureOf(500, h("1"), nil, nil), translate.Responses, 502, "api_error", "upstream_error", ""},
		{failureOf(0, nil, nil, caddyhttp.Error(http.StatusGatewayTimeout, errors.New("net/http: timeout awaiting response headers"))), translate.Chat, 504, "api_error", "upstream_timeout", ""},
		{failureOf(0, nil, nil, caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))), translate.Chat, 502, "api_error", "upstream_unavailable", ""},
		{failureOf(429, h("soon; rm -rf"), nil, nil), translate.Chat, 429, "rate_limit_error", "upstream_rate_limited", ""},
		{failureOf(200, h("1"), nil, errAborted), translate.Chat, 502, "api_error", "upstream_error", ""},
	} {
		e := unservedError(tc.f, tc.d)
		if e.status != tc.status || e.typ != tc.typ || e.code != tc.code || e.retryAfter != tc.retryAfter {
			t.Errorf("%+v -> %+v", tc.f, e)
		}
		if strings.Contains(e.message, "reverseproxy") || strings.Contains(e.message, ".go:") || strings.Contains(e.message, "127.0.0.1") {
			t.Errorf("message leaks internals: %q", e.message)
		}
	}
	e := rejectedError([]byte(`{"error":{"message":"This model's maximum context length is 8192 tokens (org-AbC123xyz789)","type":"invalid_request_error","code":"context_length_exceeded","param":"messages"}}`), 400, translate.Chat)
	if e.status != 400 || e.code != "context_length_exceeded" || e.param != "messages" || strings.Contains(e.message, "org-AbC123xyz789") ||
		!strings.Contains(e.message, "maximum context length is 8192 tokens") {
		t.Fatalf("rejected: %+v", e)
	}
	if got := attemptErrorText(caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp: refused"))); got != "dial tcp: refused" {
		t.Fatalf("attempt text %q", got)
	}
}
