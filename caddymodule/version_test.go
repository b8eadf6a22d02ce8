package caddymodule

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/spf13/cobra"
)

func TestVersionFrom(t *testing.T) {
	dep := func(path, version string, replace *debug.Module) *debug.Module {
		return &debug.Module{Path: path, Version: version, Replace: replace}
	}
	for _, c := range []struct {
		name   string
		bi     debug.BuildInfo
		linked string
		want   string
	}{
		{"cmd/caddy of a tagged checkout", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.0"}}, "", "v1.2.0"},
		{"linked version wins", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, "v1.3.0", "v1.3.0"},
		{"xcaddy from the module proxy", debug.BuildInfo{Main: debug.Module{Path: "caddy"},
			Deps: []*debug.Module{dep("github.com/caddyserver/caddy/v2", "v2.11.9", nil), dep(ModulePath, "v1.2.0", nil)}}, "", "v1.2.0"},
		{"xcaddy from a checkout", debug.BuildInfo{Main: debug.Module{Path: "caddy"},
			Deps: []*debug.Module{dep(ModulePath, "v0.0.0-00010101000000-000000000000", &debug.Module{Path: "/src/gateway"})}}, "",
			"v0.0.0-00010101000000-000000000000 => /src/gateway"},
		{"not in the build", debug.BuildInfo{Main: debug.Module{Path: "other"}}, "", "unknown"},
	} {
		if got := versionFrom(&c.bi, c.linked); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionCommandNamesTheGateway: the wrapped version command prints
// what it printed before, then the gateway's line.
func TestVersionCommandNamesTheGateway(t *testing.T) {
	root := &cobra.Command{Use: "caddy"}
	root.AddCommand(&cobra.Command{Use: "version", RunE: func(cmd *cobra.Command, _ []string) error {
		cmd.Println("v2.11.9 h1:x")
		return nil
	}})
	wrapVersionCommand(root)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := "v2.11.9 h1:x\n" + versionLine() + "\n"; out.String() != want {
		t.Fatalf("version printed %q, want %q", out.String(), want)
	}
}
