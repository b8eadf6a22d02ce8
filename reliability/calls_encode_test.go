package reliability

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestAppendCallMatchesEncodingJSON: the hand-written encoder makes the
// document encoding/json makes, field for field.
func TestAppendCallMatchesEncodingJSON(t *testing.T) {
	op, cost, up := "op_1", 0.0000055, 1e-9
	for _, c := range []Call{
		{ID: "chatcmpl-1", Object: "call", OrgID: "org_1", Model: "demo/m", RequestPayload: []byte(`{"a":[1,2]}`),
			ResponsePayload: []byte(`null`), CreatedAt: time.Date(2026, 11, 21, 13, 0, 0, 123456789, time.UTC), Status: CallSucceeded},
		{ID: "msg_2", Object: "call", OrgID: "org_\"2\"", KeyID: "key_1", OperationID: &op, Model: "m\n", ModelVersion: "v<1>&",
			RequestPayload: []byte(` { "x" : "ü" } `), ResponsePayload: []byte(`{"b":true}`), PromptTokens: 30, CompletionTokens: 4, CacheReadTokens: 20, CacheWriteTokens: 5, CacheWrite1hTokens: 2,
			LatencyMs: 12, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Status: CallFailed, Error: "boom\t",
			Endpoint: "messages", Provider: "p", Tier: "batch", Stream: true, CostUSD: &cost, UpstreamCostUSD: &up,
			Delivery: []byte(`{"tier":"batch"}`), PathKey: "p/m@full", Cache: "hit", UsageEstimated: true,
			Attempts: []Attempt{{Provider: "p", UpstreamModel: "m", Status: 503, Error: "x", LatencyMs: 2}, {Provider: "q", UpstreamModel: "n"}}},
		{ID: "resp_3", Object: "call", OrgID: "org_3", Model: "router-1", RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`),
			CreatedAt: time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC), Status: CallSucceeded,
			EvalPass: &CallEvalPass{Gates: []GateScore{{EvaluatorID: "evr_1", MinScore: 1, Score: &up, Unreliable: true}},
				Refund: &RefundOutcome{Status: RefundGateUnreliable}, ScoredAt: time.Date(2026, 2, 3, 4, 5, 7, 0, time.UTC)},
			Refund: &CallRefund{AmountUSD: 0.25, Reason: "thumbs_down", LedgerEntryID: "led_1", CreatedAt: time.Date(2026, 2, 3, 4, 5, 8, 0, time.UTC)}},
	} {
		got, ok := appendCall(nil, &c)
		if !ok {
			t.Fatal("valid call refused")
		}
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		var g, w map[string]any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("invalid JSON %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("\ngot  %s\nwant %s", got, want)
		}
	}
	if _, ok := appendCall(nil, &Call{RequestPayload: []byte(`<html>`)}); ok {
		t.Fatal("invalid payload accepted")
	}
}

func BenchmarkAppendCall(b *testing.B) {
	cost := 0.001
	c := &Call{ID: "chatcmpl-1", Object: "call", OrgID: "org_1", Model: "demo/m", RequestPayload: make([]byte, 0, 1024),
		ResponsePayload: []byte(`{"choices":[{"message":{"content":"Echo: hello there"}}]}`), CreatedAt: time.Now(), CostUSD: &cost,
		Delivery: []byte(`{"tier":"standard","cost_usd":0.001}`), Attempts: []Attempt{{Provider: "demo", UpstreamModel: "m"}}}
	c.RequestPayload = append(c.RequestPayload, `{"model":"demo/m","messages":[{"role":"user","content":"`...)
	for len(c.RequestPayload) < 1000 {
		c.RequestPayload = append(c.RequestPayload, "lorem ipsum "...)
	}
	c.RequestPayload = append(c.RequestPayload, `"}]}`...)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf, _ = appendCall(buf[:0], c)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(c)
		}
	})
}

func TestAppendLedgerEntryMatchesEncodingJSON(t *testing.T) {
	call := "chatcmpl-1"
	for _, e := range []LedgerEntry{
		{ID: "led_1", Object: ObjectLedgerEntry, OrgID: "org_1", Kind: LedgerCharge, AmountUSD: -0.0000055, CallID: &call, CreatedAt: time.Now().UTC()},
		{ID: "led_2", Object: ObjectLedgerEntry, OrgID: "org_\"x", Kind: "topup", AmountUSD: 5, Reason: "starting credit", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		var got, want LedgerEntry
		if err := json.Unmarshal(appendLedgerEntry(nil, &e), &got); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(&e)
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v want %+v", got, want)
		}
	}
}
