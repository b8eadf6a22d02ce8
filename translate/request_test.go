package translate

import (
	"github.com/tidwall/gjson"

	"bytes"
	"testing"
)

// TestStripGatewayFields covers bodies with and without gateway-only
// fields: bodies without any come back as they are, the others lose
// exactly those fields.
func TestStripGatewayFields(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"model":"m","messages":[]}`, `{"model":"m","messages":[]}`},
		{`{"model":"m","user":"tier"}`, `{"model":"m","user":"tier"}`},
		{`{"model":"m","extra":{"tier":"batch"}}`, `{"model":"m","extra":{"tier":"batch"}}`},
		{`{"model":"m","tier":"batch"}`, `{"model":"m"}`},
		{`{"tier_strict":true,"model":"m","quantization":"fp8"}`, `{"model":"m"}`},
		{`{"model":"m","forbid_atlas_network":true}`, `{"model":"m"}`},
		{`{"model":"m","metadata":{"operation_id":"op"}}`, `{"model":"m"}`},
		{`{"model":"m","metadata":{"operation_id":"op","k":"v"}}`, `{"model":"m","metadata":{"k":"v"}}`},
		{`{"model":"m","metadata":{"k":"v"}}`, `{"model":"m","metadata":{"k":"v"}}`},
		{`{"model":"m","ti\u0065r":"batch"}`, `{"model":"m"}`},
	}
	for _, c := range cases {
		out, err := StripGatewayFields([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(out) != c.want {
			t.Errorf("StripGatewayFields(%s) = %s, want %s", c.in, out, c.want)
		}
	}
}

// TestMayHoldGatewayFields: the one-pass check never misses a field the
// field-by-field lookups would find.
func TestMayHoldGatewayFields(t *testing.T) {
	for body, want := range map[string]bool{
		`{"model":"m","messages":[{"role":"user","content":"tier"}]}`: false,
		`{"model":"m","tier":"standard"}`:                             true,
		`{"model":"m","metadata":{}}`:                                 true,
		`{"model":"m","forbid_atlas_network":false}`:                  true,
		`[1,2]`: true,
		``:      true,
	} {
		if got := mayHoldGatewayFields([]byte(body)); got != want {
			t.Errorf("mayHoldGatewayFields(%s) = %v, want %v", body, got, want)
		}
	}
}

func BenchmarkStripGatewayFields(b *testing.B) {
	body := []byte(`{"model":"demo/demo-chat","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"benchmark this call please"}],"temperature":0.2,"max_tokens":64}`)
	b.ReportAllocs()
	for b.Loop() {
		out, _ := StripGatewayFields(body)
		if !bytes.Equal(out, body) {
			b.Fatal("body changed")
		}
	}
}

func TestPrepareRequestReplacesOnlyTheTopLevelModel(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":"model"}],"metadata":{"model":"keep"},"model":"demo/\"m\"","temperature":1}`)
	out, err := PrepareRequest(Chat, Chat, body, "up-\u00e9", false)
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(out) || gjson.GetBytes(out, "model").String() != "up-\u00e9" ||
		gjson.GetBytes(out, "metadata.model").String() != "keep" || gjson.GetBytes(out, "messages.0.content").String() != "model" {
		t.Fatalf("%s", out)
	}
	if string(body) != `{"messages":[{"role":"user","content":"model"}],"metadata":{"model":"keep"},"model":"demo/\"m\"","temperature":1}` {
		t.Fatal("the client's body was changed")
	}
}
