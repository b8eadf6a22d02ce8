package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// xcaddyMain is the main package xcaddy generates for
// `xcaddy build --with github.com/modelgate/gateway`.
const xcaddyMain = `package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// plug in Caddy modules here
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/modelgate/gateway"
)

func main() {
	caddycmd.Main()
}
`

// TestXcaddyStyleBuild builds Caddy with the gateway the way xcaddy does:
// a new module ("caddy") whose generated main imports the standard modules
// and github.com/modelgate/gateway, required at xcaddy's placeholder
// version and replaced by this checkout (xcaddy's --with path=dir). The
// requirements and go.sum are this module's, so nothing new is
// downloaded. The binary must list the gateway's modules and name the
// gateway's version in `caddy version` and `caddy build-info`.
func TestXcaddyStyleBuild(t *testing.T) {
	root := repoRoot(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const placeholder = "v0.0.0-00010101000000-000000000000"
	var mod strings.Builder
	fmt.Fprintf(&mod, "module caddy\n\n%s\n\nrequire github.com/modelgate/gateway %s\n\n", goDirective(t, string(gomod)), placeholder)
	// The checkout's requirements, so that the build list is the one its
	// go.sum covers.
	for _, block := range regexp.MustCompile(`(?s)\nrequire \(.*?\n\)`).FindAllString(string(gomod), -1) {
		mod.WriteString(strings.TrimPrefix(block, "\n") + "\n\n")
	}
	fmt.Fprintf(&mod, "replace github.com/modelgate/gateway => %s\n", root)
	for name, content := range map[string]string{"go.mod": mod.String(), "go.sum": string(gosum), "main.go": xcaddyMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "caddy")
	if err := goBuild(t, dir, []string{"GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off"}, "-o", bin, "."); err != nil {
		t.Fatal(err)
	}

	env := childEnv(dir)
	modules := strings.Fields(runCommand(t, dir, env, bin, "list-modules"))
	for _, m := range []string{"llm", "admin.api.llm", "http.handlers.llm_gateway", "http.handlers.llm_reliability", "http.handlers.llm_demo_upstream",
		"http.handlers.reverse_proxy", "tls"} {
		if !slices.Contains(modules, m) {
			t.Errorf("caddy list-modules does not list %s", m)
		}
	}
	version := runCommand(t, dir, env, bin, "version")
	if want := "github.com/modelgate/gateway " + placeholder + " => " + root; !strings.Contains(version, want) {
		t.Errorf("caddy version: %q, want a line %q", version, want)
	}
	info := runCommand(t, dir, env, bin, "build-info")
	if want := "dep\tgithub.com/modelgate/gateway\t" + placeholder; !strings.Contains(info, want) {
		t.Errorf("caddy build-info does not list the gateway (%q):\n%s", want, lastLines(info, 200))
	}
	help := runCommand(t, dir, env, bin, "llm", "--help")
	if !strings.Contains(help, "backup") || !strings.Contains(help, "keys") {
		t.Errorf("caddy llm --help lacks the gateway's commands:\n%s", help)
	}
}

// goDirective is the go line of a go.mod.
func goDirective(t *testing.T, gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if strings.HasPrefix(l, "go ") {
			return l
		}
	}
	t.Fatal("go.mod has no go directive")
	return ""
}
