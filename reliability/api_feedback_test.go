package reliability

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// chargedCall records a call of the org charged cost USD.
func (h *apiHarness) chargedCall(orgID string, cost float64) string {
	h.t.Helper()
	c := testCall("", orgID, nil, time.Now())
	h.s.RecordCall(c)
	if err := h.s.Charge(orgID, c.ID, cost); err != nil {
		h.t.Fatal(err)
	}
	return c.ID
}

// feedback posts feedback as acme and expects 200.
func (h *apiHarness) feedback(body string) map[string]any {
	h.t.Helper()
	status, m := h.call(http.MethodPost, "/feedback", body)
	if status != http.StatusOK {
		h.t.Fatalf("POST /feedback %s: %d %v", body, status, m)
	}
	return m
}

func TestAPIFeedback(t *testing.T) {
	h := newAPIHarness(t)
	callID := h.chargedCall(h.org.ID, 0.04)
	fb := h.feedback(fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_up","correction":"better: 42","tags":["tone","length"]}`, callID))
	assertKeys(t, fb, "id", "object", "org_id", "call_id", "user_id", "rating", "correction", "tags", "created_at", "refund")
	if !strings.HasPrefix(fb["id"].(string), "fb_") || fb["object"] != "feedback" || fb["call_id"] != callID || fb["user_id"] != "key_test" ||
		fb["rating"] != "thumbs_up" || fb["correction"] != "better: 42" || fb["refund"] != nil || fb["org_id"] != h.org.ID {
		t.Fatalf("feedback %v", fb)
	}
	if tags := fb["tags"].([]any); len(tags) != 2 || tags[0] != "tone" {
		t.Fatalf("tags = %v", tags)
	}
	assertTime(t, fb["created_at"])

	onlyTags := h.feedback(fmt.Sprintf(`{"call_id":%q,"tags":[]}`, callID))
	if onlyTags["rating"] != nil || onlyTags["correction"] != nil || len(onlyTags["tags"].([]any)) != 0 {
		t.Fatalf("tags only %v", onlyTags)
	}
	onlyCorrection := h.feedback(fmt.Sprintf(`{"call_id":%q,"correction":"x","rating":null}`, callID))
	if len(onlyCorrection["tags"].([]any)) != 0 {
		t.Fatalf("tags default %v", onlyCorrection["tags"])
	}

	down := h.feedback(fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, callID))
	refund := down["refund"].(map[string]any)
	assertKeys(t, refund, "status", "amount_usd")
	if refund["status"] != "credited" || refund["amount_usd"] != 0.04 {
		t.Fatalf("refund %v", refund)
	}
	again := h.feedback(fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, callID))
	if r := again["refund"].(map[string]any); r["status"] != "already_refunded" || r["amount_usd"] != 0.0 {
		t.Fatalf("second thumbs_down %v", r)
	}
	if bal, _ := h.s.Balance(h.org.ID); bal != StartingCreditUSD {
		t.Fatalf("balance %v", bal)
	}

	free := testCall("", h.org.ID, nil, time.Now())
	h.s.RecordCall(free)
	notCharged := h.feedback(fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, free.ID))
	if r := notCharged["refund"].(map[string]any); r["status"] != "not_charged" {
		t.Fatalf("uncharged call %v", r)
	}
}

func TestAPIFeedbackLimits(t *testing.T) {
	h := newAPIHarness(t)
	callID := h.chargedCall(h.org.ID, 0.01)
	theirs := h.chargedCall(h.other.ID, 0.01)
	tags := func(n int, tag string) string {
		return `["` + strings.TrimSuffix(strings.Repeat(tag+`","`, n), `","`) + `"]`
	}
	tests := []struct {
		body   string
		status int
		param  string
		code   string
	}{
		{`{"rating":"thumbs_up"}`, 400, "call_id", CodeMissingParameter},
		{`{"call_id":5,"rating":"thumbs_up"}`, 400, "call_id", CodeInvalidValue},
		{`{"call_id":"` + callID + `"}`, 400, "rating", CodeMissingParameter},
		{`{"call_id":"` + callID + `","rating":null,"correction":null,"tags":null}`, 400, "rating", CodeMissingParameter},
		{`{"call_id":"` + callID + `","rating":"meh"}`, 400, "rating", CodeInvalidValue},
		{`{"call_id":"` + callID + `","rating":1}`, 400, "rating", CodeInvalidValue},
		{`{"call_id":"` + callID + `","correction":"` + strings.Repeat("c", 64001) + `"}`, 400, "correction", CodeInvalidValue},
		{`{"call_id":"` + callID + `","correction":["x"]}`, 400, "correction", CodeInvalidValue},
		{`{"call_id":"` + callID + `","tags":` + tags(65, "t") + `}`, 400, "tags", CodeInvalidValue},
		{`{"call_id":"` + callID + `","tags":"t"}`, 400, "tags", CodeInvalidValue},
		{`{"call_id":"` + callID + `","tags":["ok",""]}`, 400, "tags[1]", CodeInvalidValue},
		{`{"call_id":"` + callID + `","tags":["` + strings.Repeat("t", 65) + `"]}`, 400, "tags[0]", CodeInvalidValue},
		{`{"call_id":"` + callID + `","tags":[1]}`, 400, "tags[0]", CodeInvalidValue},
		{`{"call_id":"` + callID + `","rating":"thumbs_up","score":1}`, 400, "score", CodeUnknownParameter},
		{`{"call_id":"call_missing","rating":"thumbs_down"}`, 404, "call_id", "not_found"},
		{`{"call_id":"` + theirs + `","rating":"thumbs_down"}`, 403, "call_id", "forbidden"},
	}
	for _, tt := range tests {
		status, m := h.call(http.MethodPost, "/feedback", tt.body)
		typ := map[int]string{400: ErrorTypeInvalidRequest, 404: ErrorTypeNotFound, 403: ErrorTypePermission}[tt.status]
		wantError(t, status, m, tt.status, typ, tt.param, tt.code)
	}
	if n := refundEntries(t, h.s, h.other.ID, theirs); n != 0 {
		t.Fatal("feedback of another org refunded the call")
	}
	// The edges of each limit are accepted.
	h.feedback(`{"call_id":"` + callID + `","correction":"` + strings.Repeat("é", 64000) + `","tags":` + tags(64, strings.Repeat("t", 64)) + `}`)
}

func TestAPIConcurrentThumbsDownRefundOnce(t *testing.T) {
	h := newAPIHarness(t)
	callID := h.chargedCall(h.org.ID, 0.07)
	statuses := make([]string, 100)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, data := h.do("", http.MethodPost, "/feedback", fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, callID))
			if status != http.StatusOK {
				t.Errorf("status %d: %s", status, data)
				return
			}
			switch {
			case strings.Contains(string(data), `"status":"credited"`):
				statuses[i] = RefundCredited
			case strings.Contains(string(data), `"status":"already_refunded"`):
				statuses[i] = RefundAlreadyRefunded
			default:
				t.Errorf("refund outcome in %s", data)
			}
		}()
	}
	wg.Wait()
	credited := 0
	for _, s := range statuses {
		if s == RefundCredited {
			credited++
		}
	}
	if credited != 1 || refundEntries(t, h.s, h.org.ID, callID) != 1 {
		t.Fatalf("%d credited responses, %d refund entries; want 1 and 1", credited, refundEntries(t, h.s, h.org.ID, callID))
	}
	if bal, _ := h.s.Balance(h.org.ID); bal != StartingCreditUSD {
		t.Fatalf("balance %v", bal)
	}
}

func TestAPIFeedbackFairUseCap(t *testing.T) {
	h := newAPIHarness(t)
	capped := &API{Store: h.s, FairUse: FairUse{MaxRefunds: 1}}
	post := func(callID string) (int, string) {
		rec := httptest.NewRecorder()
		body := fmt.Sprintf(`{"call_id":%q,"rating":"thumbs_down"}`, callID)
		capped.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/feedback", strings.NewReader(body)), h.org.ID, PlanFree, "key_test", "/feedback")
		return rec.Code, rec.Body.String()
	}
	first, second := h.chargedCall(h.org.ID, 0.01), h.chargedCall(h.org.ID, 0.01)
	if code, body := post(first); code != http.StatusOK || !strings.Contains(body, `"refund":{"status":"credited","amount_usd":0.01}`) {
		t.Fatalf("first: %d %s", code, body)
	}
	code, body := post(second)
	if code != http.StatusOK || !strings.Contains(body, `"refund":{"status":"capped","amount_usd":0}`) || !strings.Contains(body, `"rating":"thumbs_down"`) {
		t.Fatalf("past the cap: %d %s", code, body)
	}
	if refundEntries(t, h.s, h.org.ID, second) != 0 {
		t.Fatal("a capped thumbs_down was credited")
	}
}
