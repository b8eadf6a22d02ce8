package caddymodule

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
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
// configured headers replace the defaults, all added by the provider's
// transport to its own copy of the request: the request the proxy holds
// (and logs) carries none of them.
func TestProviderHeaders(t *testing.T) {
	sent := func(p *routing.Provider) (onWire, proxied http.Header) {
		var got http.Header
		tr := &providerTransport{creds: credentialHeaders(p), base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = r.Header
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
		})}
		req, _ := http.NewRequest(http.MethodPost, "http://up.test/v1/x", nil)
		req.Header = providerHeaders(p)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Request != req {
			t.Fatal("the response does not point at the proxy's request")
		}
		return got, req.Header
	}
	h, proxied := sent(&routing.Provider{Name: "a", Dialect: routing.DialectAnthropic, APIKey: "k1-anthropic"})
	if h.Get("X-Api-Key") != "k1-anthropic" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" ||
		h.Get("Content-Type") != "application/json" {
		t.Fatalf("anthropic headers = %v", h)
	}
	if proxied.Get("X-Api-Key") != "" {
		t.Fatalf("the proxy's request carries the credential: %v", proxied)
	}
	h, proxied = sent(&routing.Provider{Name: "o", APIKey: "k2-openai", Headers: map[string]string{"content-type": "application/json; charset=utf-8", "x-org": "7"}})
	if h.Get("Authorization") != "Bearer k2-openai" || h.Get("X-Api-Key") != "" || h.Get("Content-Type") != "application/json; charset=utf-8" ||
		h.Get("X-Org") != "7" || len(h["Content-Type"]) != 1 {
		t.Fatalf("openai headers = %v", h)
	}
	if proxied.Get("Authorization") != "" || proxied.Get("X-Org") != "" {
		t.Fatalf("the proxy's request carries credentials: %v", proxied)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
