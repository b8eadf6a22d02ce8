package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func TestParseGlobal(t *testing.T) {
	d := caddyfile.NewTestDispenser(`llm {
		store /tmp/x.db
		key_prefix acme
		max_body_size 1MB
		commit_batch 64
		commit_delay 2ms
		org demo {
			plan paid
			key mg_live_demo0000000000000000000000
			models demo/a demo/b
		}
		provider demo {
			dialect openai
			base_url http://127.0.0.1:9/v1
			api_key_env DEMO_KEY
			endpoints http://127.0.0.1:10/v1
			header X-Team blue
			dial_timeout 2s
			response_header_timeout 30s
			stream_idle_timeout 45s
			lb_retries 2
			compression on
		}
		model demo/a {
			owned_by demo
			description "model a"
			open_weight
			price 1 2
			path demo upstream-a {
				quantization q8
				served_by router_network
				tiers standard batch
				price 0.5 1
			}
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
	if app.Store != "/tmp/x.db" || app.KeyPrefix != "acme" || app.MaxBodyBytes != 1000000 || app.CommitBatch != 64 {
		t.Fatalf("app: %+v", app)
	}
	if o := app.Orgs[0]; o.Name != "demo" || o.Plan != "paid" || len(o.Keys) != 0 || len(o.KeyHashes) != 1 || strings.Join(o.Models, ",") != "demo/a,demo/b" {
		t.Fatalf("org: %+v", o)
	}
	p := app.Providers[0]
	if p.Dialect != "openai" || p.APIKeyEnv != "DEMO_KEY" || p.Headers["X-Team"] != "blue" || p.LBRetries != 2 || len(p.Endpoints) != 1 ||
		p.Compression == nil || !*p.Compression || time.Duration(p.StreamIdleTimeout) != 45*time.Second {
		t.Fatalf("provider: %+v", p)
	}
	m := app.Models[0]
	if m.InputPrice != 1 || m.OutputPrice != 2 || !m.OpenWeight || len(m.Paths) != 1 {
		t.Fatalf("model: %+v", m)
	}
	if pa := m.Paths[0]; pa.UpstreamModel != "upstream-a" || pa.Quantization != "q8" || pa.ServedBy != "router_network" ||
		strings.Join(pa.Tiers, ",") != "standard,batch" || *pa.InputPrice != 0.5 {
		t.Fatalf("path: %+v", pa)
	}
}

func TestParseGlobalRejectsUnknown(t *testing.T) {
	for _, src := range []string{
		"llm {\n\tnonsense 1\n}",
		"llm {\n\tprovider p {\n\t\tcolour red\n\t}\n}",
		"llm {\n\tprovider p {\n\t\tcompression maybe\n\t}\n}",
		"llm {\n\tmodel a/b {\n\t\tprice 1\n\t}\n}",
		"llm {\n\tmodel a/b {\n\t\tprice -1 2\n\t}\n}",
		"llm {\n\torg o {\n\t\twho me\n\t}\n}",
	} {
		if _, err := parseGlobal(caddyfile.NewTestDispenser(src), nil); err == nil {
			t.Errorf("accepted:\n%s", src)
		}
	}
}

func TestBuildCatalogSwitchesOffProvidersWithoutEnv(t *testing.T) {
	t.Setenv("GW_TEST_KEY", "")
	cat, off, err := buildCatalog([]ProviderConfig{
		{Name: "on", Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1"},
		{Name: "off", Dialect: "openai", BaseURL: "https://api.example.com/v1", APIKeyEnv: "GW_TEST_KEY"},
	}, []ModelConfig{{ID: "on/m"}, {ID: "off/m"}}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(off) != 1 || off[0] != "off" {
		t.Fatalf("off: %v", off)
	}
	if _, err := cat.Model("off/m"); err == nil {
		t.Fatal("a model of a switched-off provider is listed")
	}
	if _, err := cat.Model("on/m"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GW_TEST_KEY", "sk-real")
	cat, off, err = buildCatalog([]ProviderConfig{
		{Name: "off", Dialect: "openai", BaseURL: "https://api.example.com/v1", APIKeyEnv: "GW_TEST_KEY"},
	}, []ModelConfig{{ID: "off/m"}}, nil, 1)
	if err != nil || len(off) != 0 {
		t.Fatalf("%v %v", off, err)
	}
	if p, _ := cat.Provider("off"); p.APIKey != "sk-real" {
		t.Fatal("key not read from the environment")
	}
}

func TestValidKeyFormat(t *testing.T) {
	for k, want := range map[string]bool{
		"mg_live_demo0000000000000000000000": true,
		"mg_live_short":                      false,
		"_live_abcdefghijklmnopqrstuvwxyz":   false,
		"mg_test_abcdefghijklmnopqrstuvwxyz": false,
		"mg_live_abcdefghijklmnop qrstuvwxy": false,
	} {
		if validKeyFormat(k) != want {
			t.Errorf("%q: want %v", k, want)
		}
	}
}
