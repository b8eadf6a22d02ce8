package caddymodule

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/modelgate/gateway/reliability"
)

func TestCaddyfileFairUse(t *testing.T) {
	d := caddyfile.NewTestDispenser(`llm {
		fair_use {
			max_refunds 50
			max_share 0.4
			max_value_share 0.3
			max_refund_usd 25
			allowance_usd 0.1
			eval_max_value_share 0.2
			eval_max_refund_usd 10
			gate_min_scored 30
			gate_fail_share 0.95
		}
	}`)
	v, err := parseGlobal(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	var app App
	if err := json.Unmarshal(v.(httpcaddyfile.App).Value, &app); err != nil {
		t.Fatal(err)
	}
	want := FairUseConfig{MaxRefunds: 50, MaxShare: 0.4, MaxValueShare: 0.3, MaxRefundUSD: 25, AllowanceUSD: 0.1,
		EvalMaxValueShare: 0.2, EvalMaxRefundUSD: 10, GateMinScored: 30, GateFailShare: 0.95}
	if app.FairUse == nil || *app.FairUse != want {
		t.Fatalf("fair_use = %+v, want %+v", app.FairUse, want)
	}
	got := app.FairUse.fairUse()
	wantFU := reliability.FairUse{MaxRefunds: 50, MaxShare: 0.4, MaxValueShare: 0.3, MaxRefundUSD: 25, AllowanceUSD: 0.1,
		EvalGate: reliability.EvalGateLimits{MaxValueShare: 0.2, MaxRefundUSD: 10, MinScored: 30, MaxFailShare: 0.95}}
	if got != wantFU {
		t.Fatalf("reliability setting = %+v, want %+v", got, wantFU)
	}
	if (*FairUseConfig)(nil).fairUse() != (reliability.FairUse{}) {
		t.Fatal("no fair_use block must mean the defaults")
	}
}

func TestCaddyfileFairUseRejects(t *testing.T) {
	for _, src := range []string{
		"llm {\n\tfair_use {\n\t\tmax_value_share 1.5\n\t}\n}",
		"llm {\n\tfair_use {\n\t\teval_max_value_share -0.1\n\t}\n}",
		"llm {\n\tfair_use {\n\t\tmax_refund_usd -1\n\t}\n}",
		"llm {\n\tfair_use {\n\t\tgate_fail_share x\n\t}\n}",
		"llm {\n\tfair_use {\n\t\tgate_min_scored -3\n\t}\n}",
		"llm {\n\tfair_use {\n\t\tmax_value_share\n\t}\n}",
		"llm {\n\tfair_use {\n\t\trefund_everything yes\n\t}\n}",
		"llm {\n\tfair_use extra {\n\t}\n}",
	} {
		if _, err := parseGlobal(caddyfile.NewTestDispenser(src), nil); err == nil {
			t.Errorf("accepted:\n%s", src)
		}
	}
	// A negative allowance means none, and is accepted.
	v, err := parseGlobal(caddyfile.NewTestDispenser("llm {\n\tfair_use {\n\t\tallowance_usd -1\n\t}\n}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var app App
	if err := json.Unmarshal(v.(httpcaddyfile.App).Value, &app); err != nil || app.FairUse.AllowanceUSD != -1 {
		t.Fatalf("allowance_usd -1: %+v, %v", app.FairUse, err)
	}
}

func TestClearGateRequest(t *testing.T) {
	st, err := reliability.OpenBolt(filepath.Join(t.TempDir(), "gw.db"), reliability.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for body, status := range map[string]int{
		`not json`:                http.StatusBadRequest,
		`{"operation_id":"op_1"}`: http.StatusBadRequest,
		`{"operation_id":"op_1","evaluator_id":"evr_1"}`: http.StatusNotFound,
	} {
		_, err := clearGate(st, strings.NewReader(body), time.Now())
		var ae caddy.APIError
		if !errors.As(err, &ae) || ae.HTTPStatus != status {
			t.Errorf("%s: %v, want status %d", body, err, status)
		}
	}
	found := false
	for _, r := range (AdminAPI{}).Routes() {
		found = found || r.Pattern == "/llm/gates/clear"
	}
	if !found {
		t.Fatal("no admin route /llm/gates/clear")
	}
}
