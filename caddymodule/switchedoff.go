package caddymodule

import (
	"fmt"
	"os"
	"strings"

	"github.com/modelgate/gateway/routing"
)

// providerSetting says what a switched-off provider lacks: the environment
// variables it reads that are unset or empty, or, for a provider with
// neither a base URL nor a variable for it, "base_url".
func providerSetting(pc ProviderConfig) []string {
	var missing []string
	switch {
	case pc.BaseURLEnv != "":
		if os.Getenv(pc.BaseURLEnv) == "" {
			missing = append(missing, pc.BaseURLEnv)
		}
	case pc.BaseURL == "":
		missing = append(missing, "base_url")
	}
	if pc.APIKeyEnv != "" && os.Getenv(pc.APIKeyEnv) == "" {
		missing = append(missing, pc.APIKeyEnv)
	}
	return missing
}

// switchedOff explains each switched-off provider by what it lacks.
func switchedOff(provs []ProviderConfig, cat *routing.Catalog) map[string]string {
	out := map[string]string{}
	for _, pc := range provs {
		if _, on := cat.Provider(pc.Name); on {
			continue
		}
		missing := providerSetting(pc)
		switch {
		case len(missing) == 0:
			out[pc.Name] = fmt.Sprintf("provider %q is switched off", pc.Name)
		case missing[0] == "base_url":
			out[pc.Name] = fmt.Sprintf("provider %q has no base_url", pc.Name)
		default:
			noun := "variable"
			if len(missing) > 1 {
				noun = "variables"
			}
			out[pc.Name] = fmt.Sprintf("provider %q needs the environment %s %s", pc.Name, noun, strings.Join(missing, " and "))
		}
	}
	return out
}

// offModelReasons maps each configured model and router that the catalog
// left out, because every provider serving it is switched off, to the
// client-facing reason: which providers and which environment variables.
func offModelReasons(provs []ProviderConfig, models []ModelConfig, routers []RouterConfig, cat *routing.Catalog) map[string]string {
	off := switchedOff(provs, cat)
	if len(off) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, mc := range models {
		if _, err := cat.Model(mc.ID); err == nil {
			continue
		}
		var reasons []string
		seen := map[string]bool{}
		vars := false
		add := func(prov string) {
			if r, ok := off[prov]; ok && !seen[prov] {
				seen[prov] = true
				reasons = append(reasons, r)
				vars = vars || strings.Contains(r, "environment")
			}
		}
		if len(mc.Paths) == 0 {
			prov, _, _ := strings.Cut(mc.ID, "/")
			add(prov)
		}
		for _, p := range mc.Paths {
			add(p.Provider)
		}
		if len(reasons) > 0 {
			msg := fmt.Sprintf("model %q is switched off: %s", mc.ID, strings.Join(reasons, "; "))
			if vars {
				// A reload keeps the process, and with it the environment.
				msg += " (set in the environment Caddy starts with; a reload does not read it again)"
			}
			out[mc.ID] = msg
		}
	}
	for _, rc := range routers {
		if _, on := cat.Router(rc.ID); on {
			continue
		}
		if why, ok := out[rc.Reference]; ok {
			out[rc.ID] = fmt.Sprintf("router %q is switched off with the model it stands in for: %s", rc.ID, why)
		}
	}
	return out
}
