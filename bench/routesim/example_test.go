package main

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/modelgate/gateway/caddymodule"
)

// TestCatalogIsTheExamples: `routesim -gateway` against a gateway started
// from Caddyfile.example prices its report with this package's catalog, so
// the example's router-1 must have the same reference, pool and prices.
func TestCatalogIsTheExamples(t *testing.T) {
	src, err := os.ReadFile("../../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt(src, nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile.example: %v", err)
	}
	var full struct {
		Apps struct {
			LLM caddymodule.App `json:"llm"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfg, &full); err != nil {
		t.Fatal(err)
	}
	app := full.Apps.LLM
	i := slices.IndexFunc(app.Routers, func(r caddymodule.RouterConfig) bool { return r.ID == routerModel })
	if i < 0 {
		t.Fatalf("Caddyfile.example has no %s", routerModel)
	}
	rt := app.Routers[i]
	if ref := referenceModel(catalog); rt.Reference != ref.id() {
		t.Errorf("example's %s stands in for %s, the simulation's for %s", routerModel, rt.Reference, ref.id())
	}
	var pool []string
	for _, m := range catalog {
		if !m.reference {
			pool = append(pool, m.id())
		}
	}
	if !slices.Equal(rt.Pool, pool) {
		t.Errorf("example's pool %v, the simulation's %v", rt.Pool, pool)
	}
	for _, m := range catalog {
		j := slices.IndexFunc(app.Models, func(mc caddymodule.ModelConfig) bool { return mc.ID == m.id() })
		if j < 0 {
			t.Errorf("Caddyfile.example has no model %s", m.id())
			continue
		}
		if mc := app.Models[j]; mc.InputPrice != m.priceIn || mc.OutputPrice != m.priceOut {
			t.Errorf("%s: example price %v/%v, the simulation's %v/%v", m.id(), mc.InputPrice, mc.OutputPrice, m.priceIn, m.priceOut)
		}
	}
}
