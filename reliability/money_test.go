package reliability

import (
	"errors"
	"testing"
	"time"
)

// TestCreditAndAutoTopupSettings: a manual credit is a ledger entry of its
// own kind; auto top-up settings are stored per org and validated.
func TestCreditAndAutoTopupSettings(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Credit(org.ID, 12.5, "goodwill")
	if err != nil || e.Kind != LedgerCredit || e.AmountUSD != 12.5 || e.Reason != "goodwill" {
		t.Fatalf("Credit = %+v, %v", e, err)
	}
	if bal, _ := s.Balance(org.ID); bal != 17.5 {
		t.Fatalf("balance %v, want 17.5", bal)
	}
	if _, err := s.Credit(org.ID, -1, "x"); err == nil {
		t.Fatal("negative credit accepted")
	}
	if _, err := s.Credit("org_nope", 1, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("credit of an unknown org: %v", err)
	}
	if st, err := s.OrgSettingsOf(org.ID); err != nil || st.AutoTopup != nil {
		t.Fatalf("settings before any: %+v, %v", st, err)
	}
	if _, err := s.SetAutoTopup(org.ID, AutoTopup{ThresholdUSD: 2, AmountUSD: 10}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.OrgSettingsOf(org.ID); st.AutoTopup == nil || *st.AutoTopup != (AutoTopup{ThresholdUSD: 2, AmountUSD: 10}) {
		t.Fatalf("settings: %+v", st)
	}
	if _, err := s.SetAutoTopup(org.ID, AutoTopup{ThresholdUSD: -1}); err == nil {
		t.Fatal("negative threshold accepted")
	}
}

// TestUsageReport: calls in the range add up by day, model, key and
// operation, with refunds; calls outside the range or of another org do
// not count.
func TestUsageReport(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	other, _ := s.EnsureOrg("other")
	day1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	op := "op_1"
	cost := func(v float64) *float64 { return &v }
	for i, c := range []*Call{
		{ID: "chatcmpl-a", OrgID: org.ID, KeyID: "key_1", Model: "m1", CreatedAt: day1, CostUSD: cost(0.5), ChargeUSD: 0.5,
			PromptTokens: 100, CacheReadTokens: 80, CompletionTokens: 10, OperationID: &op},
		{ID: "chatcmpl-b", OrgID: org.ID, KeyID: "key_2", Model: "m2", CreatedAt: day2, CostUSD: cost(0.25), ChargeUSD: 0.25,
			PromptTokens: 50, CacheWriteTokens: 20, CompletionTokens: 5},
		{ID: "chatcmpl-c", OrgID: org.ID, KeyID: "key_1", Model: "m1", CreatedAt: day2.Add(time.Hour), CostUSD: cost(1), ChargeUSD: 1,
			PromptTokens: 10, CompletionTokens: 1},
		{ID: "chatcmpl-old", OrgID: org.ID, KeyID: "key_1", Model: "m1", CreatedAt: day1.Add(-48 * time.Hour), CostUSD: cost(9), ChargeUSD: 9},
		{ID: "chatcmpl-x", OrgID: other.ID, KeyID: "key_9", Model: "m1", CreatedAt: day1, CostUSD: cost(7), ChargeUSD: 7},
	} {
		c.Status, c.RequestPayload, c.ResponsePayload = CallSucceeded, []byte(`{}`), []byte(`{}`)
		s.RecordCall(c)
		_ = i
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RefundCall(org.ID, "chatcmpl-b", RefundReasonThumbsDown); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Usage(org.ID, day1.Add(-time.Hour), day2.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Calls != 3 || rep.Total.CostUSD != 1.75 || rep.Total.RefundedUSD != 0.25 ||
		rep.Total.InputTokens != 160 || rep.Total.CacheReadTokens != 80 || rep.Total.CacheWriteTokens != 20 || rep.Total.OutputTokens != 16 {
		t.Fatalf("total %+v", rep.Total)
	}
	want := map[string][]UsageGroup{
		"day":       {{Key: "2026-11-01", Calls: 1, CostUSD: 0.5}, {Key: "2026-11-02", Calls: 2, CostUSD: 1.25, RefundedUSD: 0.25}},
		"model":     {{Key: "m1", Calls: 2, CostUSD: 1.5}, {Key: "m2", Calls: 1, CostUSD: 0.25, RefundedUSD: 0.25}},
		"key":       {{Key: "key_1", Calls: 2, CostUSD: 1.5}, {Key: "key_2", Calls: 1, CostUSD: 0.25, RefundedUSD: 0.25}},
		"operation": {{Key: "", Calls: 2, CostUSD: 1.25, RefundedUSD: 0.25}, {Key: "op_1", Calls: 1, CostUSD: 0.5}},
	}
	for name, got := range map[string][]UsageGroup{"day": rep.ByDay, "model": rep.ByModel, "key": rep.ByKey, "operation": rep.ByOperation} {
		if len(got) != len(want[name]) {
			t.Fatalf("by %s: %+v", name, got)
		}
		for i, g := range got {
			w := want[name][i]
			if g.Key != w.Key || g.Calls != w.Calls || g.CostUSD != w.CostUSD || g.RefundedUSD != w.RefundedUSD {
				t.Errorf("by %s [%d]: got %+v, want %+v", name, i, g, w)
			}
		}
	}
	if _, err := s.Usage(org.ID, day2, day1); err == nil {
		t.Fatal("a reversed range was accepted")
	}
	if _, err := s.Usage(org.ID, day1, day1.Add(MaxUsageRange+time.Hour)); err == nil {
		t.Fatal("a range over the maximum was accepted")
	}
	// The refunded call shows its refund.
	c, err := s.Call("chatcmpl-b")
	if err != nil || c.Refund == nil || c.Refund.AmountUSD != 0.25 || c.Refund.Reason != RefundReasonThumbsDown || *c.CostUSD != 0.25 {
		t.Fatalf("refunded call: %+v %v", c.Refund, err)
	}
}
