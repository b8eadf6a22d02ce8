package caddymodule

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelgate/gateway/routing"
)

// TestDeliveryJSONEncodesOnce: json gives the bytes appendJSON gives, the
// same bytes on every call, and a result no append can write through.
func TestDeliveryJSONEncodesOnce(t *testing.T) {
	cost, ex := 0.0012, "fp_e_x"
	d := &delivery{tier: "standard", servedBy: "provider", provider: "demo", cost: &cost, latencyMs: 7,
		fps: routing.Fingerprints{Prompt: "fp_p_x", Exchange: &ex, Cache: "fp_c_x"}}
	want := d.appendJSON(nil)
	first := d.json()
	if !bytes.Equal(first, want) || !json.Valid(first) {
		t.Fatalf("json() = %s, want %s", first, want)
	}
	_ = append(first, 'x')
	if second := d.json(); !bytes.Equal(second, want) {
		t.Fatalf("second json() = %s, want %s", second, want)
	}
}

// TestTierValue: placeholder values of tiers are the tier names.
func TestTierValue(t *testing.T) {
	for _, tier := range append(append([]string(nil), routing.Tiers...), "other", "") {
		if v, ok := tierValue(tier).(string); !ok || v != tier {
			t.Errorf("tierValue(%q) = %#v", tier, tierValue(tier))
		}
	}
}

// TestProviderHeaders: credentials go in each dialect's header and
// configured headers replace the defaults.
func TestProviderHeaders(t *testing.T) {
	h := providerHeaders(&routing.Provider{Name: "a", Dialect: routing.DialectAnthropic, APIKey: "k1"})
	if h.Get("X-Api-Key") != "k1" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" ||
		h.Get("Content-Type") != "application/json" {
		t.Fatalf("anthropic headers = %v", h)
	}
	h = providerHeaders(&routing.Provider{Name: "o", APIKey: "k2", Headers: map[string]string{"content-type": "application/json; charset=utf-8", "x-org": "7"}})
	if h.Get("Authorization") != "Bearer k2" || h.Get("X-Api-Key") != "" || h.Get("Content-Type") != "application/json; charset=utf-8" ||
		h.Get("X-Org") != "7" || len(h["Content-Type"]) != 1 {
		t.Fatalf("openai headers = %v", h)
	}
}
