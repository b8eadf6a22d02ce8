package demoupstream

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

const (
	chatBody     = `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	messagesBody = `{"model":"demo-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
)

func TestRoutingBySuffix(t *testing.T) {
	srv := serve(t, Config{})
	for _, path := range []string{"/v1/chat/completions", "/openai/v1/chat/completions", "/chat/completions"} {
		got := call(t, srv, http.MethodPost, path, chatBody)
		if got.status != http.StatusOK || gjson.Get(got.body, "choices.0.message.content").String() != "Echo: hi" {
			t.Errorf("POST %s = %d %s", path, got.status, got.body)
		}
	}
	for _, path := range []string{"/v1/messages", "/anthropic/v1/messages"} {
		got := call(t, srv, http.MethodPost, path, messagesBody, anthropicHeaders...)
		if got.status != http.StatusOK || gjson.Get(got.body, "content.0.text").String() != "Echo: hi" {
			t.Errorf("POST %s = %d %s", path, got.status, got.body)
		}
	}
}

func TestNotFound(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct{ method, path, want string }{
		{http.MethodPost, "/v1/completions", `{"error":{"message":"Invalid URL (POST /v1/completions)","type":"invalid_request_error","param":null,"code":null}}`},
		{http.MethodGet, "/v1/chat/completions", `{"error":{"message":"Invalid URL (GET /v1/chat/completions)","type":"invalid_request_error","param":null,"code":null}}`},
		{http.MethodPost, "/v1/models", `{"error":{"message":"Invalid URL (POST /v1/models)","type":"invalid_request_error","param":null,"code":null}}`},
		{http.MethodGet, "/", `{"error":{"message":"Invalid URL (GET /)","type":"invalid_request_error","param":null,"code":null}}`},
	}
	for _, tc := range tests {
		got := call(t, srv, tc.method, tc.path, "")
		if got.status != http.StatusNotFound || got.body != tc.want {
			t.Errorf("%s %s = %d %s, want 404 %s", tc.method, tc.path, got.status, got.body, tc.want)
		}
	}
}

func TestModels(t *testing.T) {
	srv := serve(t, Config{FailStatus: 500})
	got := call(t, srv, http.MethodGet, "/v1/models", "")
	want := `{"object":"list","data":[{"id":"demo-chat","object":"model","created":1735689600,"owned_by":"modelgate"},{"id":"demo-mini","object":"model","created":1735689600,"owned_by":"modelgate"},{"id":"demo-embed","object":"model","created":1735689600,"owned_by":"modelgate"}]}`
	if got.status != http.StatusOK || got.body != want {
		t.Errorf("GET /v1/models = %d %s", got.status, got.body)
	}
}

func TestAuthentication(t *testing.T) {
	srv := serve(t, Config{APIKey: "sk-demo-0123456789"})
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
		want    string
	}{
		{"openai no key", http.MethodPost, "/v1/chat/completions", chatBody, nil, 401,
			`{"error":{"message":"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).","type":"invalid_request_error","param":null,"code":null}}`},
		{"openai wrong key", http.MethodPost, "/v1/chat/completions", chatBody, []string{"Authorization: Bearer sk-wrong-key-abcd"}, 401,
			`{"error":{"message":"Incorrect API key provided: sk-**********abcd.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{"openai wrong scheme", http.MethodPost, "/v1/chat/completions", chatBody, []string{"Authorization: Basic sk-demo-0123456789"}, 401, ""},
		{"openai x-api-key is not enough", http.MethodPost, "/v1/responses", `{"model":"m","input":"x"}`, []string{"x-api-key: sk-demo-0123456789"}, 401, ""},
		{"openai right key", http.MethodPost, "/v1/chat/completions", chatBody, []string{"Authorization: Bearer sk-demo-0123456789"}, 200, ""},
		{"models need the key", http.MethodGet, "/v1/models", "", nil, 401, ""},
		{"models with key", http.MethodGet, "/v1/models", "", []string{"Authorization: bearer sk-demo-0123456789"}, 200, ""},
		{"anthropic no key", http.MethodPost, "/v1/messages", messagesBody, anthropicHeaders, 401,
			`{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is required"},"request_id":"req_ID"}`},
		{"anthropic wrong key", http.MethodPost, "/v1/messages", messagesBody, []string{"anthropic-version: 2023-06-01", "x-api-key: nope"}, 401,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_ID"}`},
		{"anthropic bearer is not enough", http.MethodPost, "/v1/messages", messagesBody, []string{"anthropic-version: 2023-06-01", "Authorization: Bearer sk-demo-0123456789"}, 401, ""},
		{"anthropic right key", http.MethodPost, "/v1/messages", messagesBody, []string{"anthropic-version: 2023-06-01", "x-api-key: sk-demo-0123456789"}, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, srv, tc.method, tc.path, tc.body, tc.headers...)
			if got.status != tc.status {
				t.Fatalf("status %d, want %d: %s", got.status, tc.status, got.body)
			}
			if tc.want != "" && normalize(got.body) != tc.want {
				t.Errorf("body %s\nwant %s", got.body, tc.want)
			}
		})
	}
}

func TestAnthropicVersionRequired(t *testing.T) {
	srv := serve(t, Config{})
	got := call(t, srv, http.MethodPost, "/v1/messages", messagesBody)
	want := `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version: header is required"},"request_id":"req_ID"}`
	if got.status != http.StatusBadRequest || normalize(got.body) != want {
		t.Errorf("got %d %s", got.status, got.body)
	}
}

func TestRequestIDs(t *testing.T) {
	srv := serve(t, Config{})
	id := regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for _, tc := range []struct {
		method, path, body string
		headers            []string
	}{
		{http.MethodPost, "/v1/chat/completions", chatBody, nil},
		{http.MethodPost, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil},
		{http.MethodPost, "/v1/chat/completions", `{}`, nil},
		{http.MethodGet, "/nowhere", "", nil},
		{http.MethodGet, "/v1/models", "", nil},
		{http.MethodPost, "/v1/messages", messagesBody, anthropicHeaders},
	} {
		got := call(t, srv, tc.method, tc.path, tc.body, tc.headers...)
		rid := got.header.Get("x-request-id")
		if !id.MatchString(rid) || seen[rid] {
			t.Errorf("%s %s: x-request-id %q", tc.method, tc.path, rid)
		}
		seen[rid] = true
		if strings.HasSuffix(tc.path, "/messages") && got.header.Get("request-id") != rid {
			t.Errorf("request-id %q, want %q", got.header.Get("request-id"), rid)
		}
	}
}

func TestFailStatus(t *testing.T) {
	tests := []struct {
		name    string
		fail    int
		path    string
		body    string
		headers []string
		status  int
		want    string
	}{
		{"openai 503", 503, "/v1/chat/completions", chatBody, nil, 503,
			`{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}`},
		{"openai invalid body still fails", 429, "/v1/chat/completions", `{`, nil, 429,
			`{"error":{"message":"Rate limit reached for requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
		{"embeddings", 500, "/v1/embeddings", `{"model":"e","input":"x"}`, nil, 500,
			`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`},
		{"anthropic 529", 529, "/v1/messages", messagesBody, anthropicHeaders, 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_ID"}`},
		{"out of range becomes 500", 200, "/v1/messages", messagesBody, anthropicHeaders, 500,
			`{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_ID"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, Config{FailStatus: tc.fail})
			got := call(t, srv, http.MethodPost, tc.path, tc.body, tc.headers...)
			if got.status != tc.status || normalize(got.body) != tc.want {
				t.Errorf("got %d %s\nwant %d %s", got.status, got.body, tc.status, tc.want)
			}
		})
	}
}

func TestLatency(t *testing.T) {
	srv := serve(t, Config{Latency: 60 * time.Millisecond})
	for _, path := range []string{"/v1/chat/completions", "/v1/models", "/missing"} {
		start := time.Now()
		call(t, srv, http.MethodPost, path, chatBody)
		if d := time.Since(start); d < 60*time.Millisecond {
			t.Errorf("%s answered after %v", path, d)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	srv := serve(t, Config{})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", maxBodyBytes) + `"}]}`
	got := call(t, srv, http.MethodPost, "/v1/chat/completions", body)
	if got.status != http.StatusRequestEntityTooLarge || gjson.Get(got.body, "error.type").String() != "invalid_request_error" {
		t.Errorf("got %d %s", got.status, got.body)
	}
}

func TestInvalidJSON(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct {
		path    string
		body    string
		headers []string
		want    string
	}{
		{"/v1/chat/completions", `{"model":`, nil, `{"error":{"message":"We could not parse the JSON body of your request. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.","type":"invalid_request_error","param":null,"code":null}}`},
		{"/v1/responses", `[1]`, nil, `{"error":{"message":"Invalid type for the request body: expected an object, but got an array instead.","type":"invalid_request_error","param":null,"code":"invalid_type"}}`},
		{"/v1/messages", ``, anthropicHeaders, `{"type":"error","error":{"type":"invalid_request_error","message":"There was an error parsing the body of your request: the body is not valid JSON"},"request_id":"req_ID"}`},
	}
	for _, tc := range tests {
		got := call(t, srv, http.MethodPost, tc.path, tc.body, tc.headers...)
		if got.status != http.StatusBadRequest || normalize(got.body) != tc.want {
			t.Errorf("%s %q = %d %s", tc.path, tc.body, got.status, got.body)
		}
	}
}

// rawCall sends a request without the transport's transparent gzip handling,
// so that the test sees the encoding on the wire.
func rawCall(t *testing.T, url, body, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestCompression(t *testing.T) {
	srv := serve(t, Config{})
	url := srv.URL + "/v1/chat/completions"
	tests := []struct {
		accept string
		gzip   bool
	}{
		{"", false},
		{"gzip", true},
		{"br, gzip;q=0.5", true},
		{"*", true},
		{"gzip;q=0", false},
		{"identity", false},
	}
	for _, tc := range tests {
		res, b := rawCall(t, url, chatBody, tc.accept)
		if got := res.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Errorf("Accept-Encoding %q: gzip = %v", tc.accept, got)
			continue
		}
		if tc.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if gjson.GetBytes(b, "choices.0.message.content").String() != "Echo: hi" {
			t.Errorf("Accept-Encoding %q: body %s", tc.accept, b)
		}
	}

	// Errors are compressed like any JSON body; streams never are.
	res, _ := rawCall(t, url, `{}`, "gzip")
	if res.StatusCode != 400 || res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("error body: %d %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	res, b := rawCall(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, "gzip")
	if res.Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(b, []byte("data: {")) {
		t.Errorf("stream: %q %q", res.Header.Get("Content-Encoding"), b)
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := map[string]bool{
		"":                    false,
		"gzip":                true,
		"GZIP":                true,
		"deflate, gzip":       true,
		"gzip;q=0":            false,
		"gzip; q=0.0":         false,
		"gzip;q=0.001":        true,
		"*;q=0.1":             true,
		"br":                  false,
		"x-gzip":              false,
		"identity, *;q=0":     false,
		"gzip;level=1;q=0.50": true,
	}
	for in, want := range tests {
		if got := acceptsGzip(in); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", in, got, want)
		}
	}
}
