package demoupstream

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestStatusDirectiveOpenAI(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct {
		status int
		typ    string
		code   string
	}{
		{400, "invalid_request_error", ""},
		{401, "invalid_request_error", "invalid_api_key"},
		{403, "invalid_request_error", "permission_denied"},
		{404, "invalid_request_error", "model_not_found"},
		{408, "invalid_request_error", ""},
		{429, "requests", "rate_limit_exceeded"},
		{500, "server_error", ""},
		{502, "server_error", ""},
		{503, "server_error", ""},
		{504, "server_error", ""},
	}
	paths := map[string]string{
		"/v1/chat/completions": `{"model":"m","messages":[{"role":"user","content":"boom [[status:%d]]"}]}`,
		"/v1/responses":        `{"model":"m","input":"boom [[status:%d]]"}`,
	}
	for path, tmpl := range paths {
		for _, tc := range tests {
			for _, stream := range []string{"", `,"stream":true`} {
				body := sprintfBody(tmpl, tc.status, stream)
				got := call(t, srv, http.MethodPost, path, body)
				if got.status != tc.status {
					t.Errorf("%s %d%s: status %d", path, tc.status, stream, got.status)
					continue
				}
				e := gjson.Get(got.body, "error")
				code := e.Get("code")
				if e.Get("type").String() != tc.typ || e.Get("message").String() == "" ||
					e.Get("param").Type != gjson.Null || (tc.code == "" && code.Type != gjson.Null) || code.String() != tc.code {
					t.Errorf("%s %d%s: body %s", path, tc.status, stream, got.body)
				}
				if len(gjson.Parse(got.body).Map()) != 1 || len(e.Map()) != 4 {
					t.Errorf("%s %d: unexpected fields in %s", path, tc.status, got.body)
				}
			}
		}
	}
}

func TestStatusDirectiveAnthropic(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct {
		status int
		typ    string
	}{
		{400, "invalid_request_error"},
		{401, "authentication_error"},
		{402, "billing_error"},
		{403, "permission_error"},
		{404, "not_found_error"},
		{413, "request_too_large"},
		{422, "invalid_request_error"},
		{429, "rate_limit_error"},
		{500, "api_error"},
		{502, "api_error"},
		{503, "overloaded_error"},
		{504, "timeout_error"},
		{529, "overloaded_error"},
	}
	for _, tc := range tests {
		for _, stream := range []string{"", `,"stream":true`} {
			body := sprintfBody(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"boom [[status:%d]]"}]}`, tc.status, stream)
			got := call(t, srv, http.MethodPost, "/v1/messages", body, anthropicHeaders...)
			if got.status != tc.status {
				t.Errorf("%d%s: status %d", tc.status, stream, got.status)
				continue
			}
			root := gjson.Parse(got.body)
			if root.Get("type").String() != "error" || root.Get("error.type").String() != tc.typ ||
				root.Get("error.message").String() == "" || root.Get("request_id").String() != got.header.Get("request-id") {
				t.Errorf("%d%s: body %s", tc.status, stream, got.body)
			}
		}
	}
}

func TestStatusDirectiveOutOfRangeIgnored(t *testing.T) {
	srv := serve(t, Config{})
	got := call(t, srv, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"ok [[status:302]]"}]}`)
	if got.status != 200 || gjson.Get(got.body, "choices.0.message.content").String() != "Echo: ok" {
		t.Errorf("got %d %s", got.status, got.body)
	}
}

func TestSleepDirective(t *testing.T) {
	srv := serve(t, Config{})
	for _, content := range []string{"slow [[sleep:80]]", "slow then fail [[sleep:80]] [[status:500]]"} {
		start := time.Now()
		call(t, srv, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+content+`"}]}`)
		if d := time.Since(start); d < 80*time.Millisecond {
			t.Errorf("%q answered after %v", content, d)
		}
	}
}

func TestStatusErrorMessages(t *testing.T) {
	// Every status a test may force gets a non-empty message in both dialects.
	for status := 400; status <= 599; status++ {
		for _, d := range []dialect{dialectOpenAI, dialectAnthropic} {
			if e := statusError(d, status); e.message == "" || e.status != status {
				t.Errorf("statusError(%d, %d) = %+v", d, status, e)
			}
		}
	}
}

// sprintfBody fills the status into tmpl and adds the extra top-level fields.
func sprintfBody(tmpl string, status int, extra string) string {
	body := fmt.Sprintf(tmpl, status)
	return strings.TrimSuffix(body, "}") + extra + "}"
}
