package caddymodule

import (
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"
)

// ModulePath is the Go module path of the gateway.
const ModulePath = "github.com/modelgate/gateway"

// Version, when set at link time, is the gateway's version as its packager
// names it:
//
//	go build -ldflags '-X github.com/modelgate/gateway/caddymodule.Version=v1.2.0' ./cmd/caddy
//
// When it is empty the version comes from the binary's build information:
// the module version xcaddy (or `go build` of a tagged checkout) recorded.
var Version string

// moduleVersion is the gateway's version in the running binary: Version
// when it was set at link time, else the version the Go toolchain recorded
// for the module, with its replacement when it was built from a local
// directory (as `xcaddy build --with github.com/modelgate/gateway=.` does).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if Version != "" {
			return Version
		}
		return "unknown"
	}
	return versionFrom(bi, Version)
}

// versionFrom reads the gateway's version from bi; linked, when not empty,
// is the version set at link time, which takes precedence.
func versionFrom(bi *debug.BuildInfo, linked string) string {
	if linked != "" {
		return linked
	}
	if bi.Main.Path == ModulePath {
		return bi.Main.Version
	}
	for _, dep := range bi.Deps {
		if dep.Path != ModulePath {
			continue
		}
		v := dep.Version
		if r := dep.Replace; r != nil {
			v += " => " + r.Path
			if r.Version != "" {
				v += " " + r.Version
			}
		}
		return v
	}
	return "unknown"
}

// versionLine is the line `caddy version` adds for the gateway.
func versionLine() string {
	return ModulePath + " " + moduleVersion()
}

// versionHook makes `caddy version` print the gateway's version after
// Caddy's own. Caddy builds its command tree before it runs a command, and
// a plugin's command cannot reach the tree while it is built; cobra's
// initializers run once the tree is complete, just before the command, so
// the hook wraps the version command from there.
var versionHook sync.Once

// hookVersionCommand arranges, once per process, for the version command
// next to sub (a command of the same tree) to print the gateway's version
// too.
func hookVersionCommand(sub *cobra.Command) {
	versionHook.Do(func() {
		var once sync.Once
		cobra.OnInitialize(func() {
			once.Do(func() { wrapVersionCommand(sub.Root()) })
		})
	})
}

// wrapVersionCommand makes root's "version" subcommand print the
// gateway's version line after what it prints itself.
func wrapVersionCommand(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "version" {
			continue
		}
		run, runE := c.Run, c.RunE
		c.Run = nil
		c.RunE = func(cmd *cobra.Command, args []string) error {
			switch {
			case runE != nil:
				if err := runE(cmd, args); err != nil {
					return err
				}
			case run != nil:
				run(cmd, args)
			}
			return printVersionLine(cmd.OutOrStdout())
		}
	}
}

func printVersionLine(w io.Writer) error {
	_, err := fmt.Fprintln(w, versionLine())
	return err
}
