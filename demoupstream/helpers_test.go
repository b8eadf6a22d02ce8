package demoupstream

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// exchange is one raw HTTP round trip as a test sees it.
type exchange struct {
	status int
	header http.Header
	body   string
}

// serve starts New(cfg) on a real listener, so that flushing, aborts and
// compression behave as they do in production.
func serve(t testing.TB, cfg Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return srv
}

// call sends one request. headers are "Name: value" lines. The default
// transport asks for gzip and decompresses it, as most clients do.
func call(t testing.TB, srv *httptest.Server, method, path, body string, headers ...string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return exchange{status: res.StatusCode, header: res.Header, body: string(b)}
}

// anthropicHeaders are the headers every Anthropic client sends.
var anthropicHeaders = []string{"anthropic-version: 2023-06-01"}

// The patterns of everything that varies between runs: random ids and
// timestamps. Each is replaced by a fixed token so golden files can be
// compared byte for byte; a wrong id shape fails the comparison.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`chatcmpl-[0-9A-Za-z]{29}\b`), "chatcmpl-ID"},
	{regexp.MustCompile(`resp_[0-9a-f]{50}\b`), "resp_ID"},
	{regexp.MustCompile(`msg_[0-9a-f]{50}\b`), "msg_ITEM"},
	{regexp.MustCompile(`fc_[0-9a-f]{50}\b`), "fc_ITEM"},
	{regexp.MustCompile(`msg_01[0-9A-Za-z]{22}\b`), "msg_ID"},
	{regexp.MustCompile(`req_[0-9a-f]{32}\b`), "req_ID"},
	{regexp.MustCompile(`"(created|created_at)":\d{10}\b`), `"$1":1700000000`},
}

func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// golden compares got, normalized, with testdata/name, or rewrites the file
// under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got = normalize(got)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
