package caddymodule

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// TestManifestMatchesRegisteredModules keeps xcaddy.json truthful: the
// modules it lists are exactly the ones this package registers.
func TestManifestMatchesRegisteredModules(t *testing.T) {
	raw, err := os.ReadFile("../xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		CaddyVersion string   `json:"caddy_version"`
		ModulePath   string   `json:"module_path"`
		Modules      []string `json:"modules"`
		Caddyfile    struct {
			Directives []string `json:"directives"`
		} `json:"caddyfile"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, id := range caddy.Modules() {
		if mod, err := caddy.GetModule(id); err == nil && strings.HasPrefix(mod.ID.Name(), "llm") {
			ours = append(ours, id)
		}
	}
	slices.Sort(ours)
	want := slices.Clone(m.Modules)
	slices.Sort(want)
	if !slices.Equal(ours, want) {
		t.Fatalf("xcaddy.json lists %v, the package registers %v", want, ours)
	}
	for _, d := range m.Caddyfile.Directives {
		// An unregistered directive fails to adapt.
		src := ":8080 {\n\troute {\n\t\t" + d + "\n\t}\n}\n"
		if _, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(src), nil); err != nil {
			t.Errorf("xcaddy.json lists directive %q, which does not adapt: %v", d, err)
		}
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "module "+m.ModulePath+"\n") {
		t.Errorf("xcaddy.json module_path %q is not go.mod's module", m.ModulePath)
	}
	if !strings.Contains(string(gomod), "github.com/caddyserver/caddy/v2 "+m.CaddyVersion) {
		t.Errorf("xcaddy.json caddy_version %q is not the one go.mod requires", m.CaddyVersion)
	}
}
