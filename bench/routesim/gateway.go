package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/modelgate/gateway/bench/internal/cmdutil"
	_ "github.com/modelgate/gateway/caddymodule"
)

// readyTimeout bounds the wait for the gateway and the demo upstream to
// answer after the config is loaded.
const readyTimeout = 15 * time.Second

// gateway is the in-process Caddy that serves the gateway and the demo
// upstream.
type gateway struct {
	// base is the gateway's API address, http://127.0.0.1:<port>/v1.
	base string
	// upstream is the demo upstream's address, http://127.0.0.1:<port>.
	upstream string
}

// startGateway loads the simulation's Caddyfile into this process's Caddy,
// with its store and Caddy's own data under dir, and waits until both
// sites answer. The caller stops it with caddy.Stop.
func startGateway(ctx context.Context, dir string, models []simModel) (*gateway, error) {
	// Caddy keeps autosave and locks under the XDG directories; pointing
	// them into dir keeps the run from touching the user's own Caddy.
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	ports, err := cmdutil.FreePorts(2)
	if err != nil {
		return nil, err
	}
	gwPort, upPort := ports[0], ports[1]
	src := simCaddyfile(filepath.Join(dir, "sim.db"), gwPort, upPort, models)
	cfg, _, err := (caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}).Adapt([]byte(src), nil)
	if err != nil {
		return nil, fmt.Errorf("adapting the Caddyfile: %w", err)
	}
	if err := caddy.Load(cfg, true); err != nil {
		return nil, fmt.Errorf("loading the config: %w", err)
	}
	g := &gateway{
		base:     fmt.Sprintf("http://127.0.0.1:%d/v1", gwPort),
		upstream: fmt.Sprintf("http://127.0.0.1:%d", upPort),
	}
	// Without a key the gateway answers 401: that is enough to know it
	// is serving.
	if err := waitStatus(ctx, g.base+"/models", http.StatusUnauthorized); err != nil {
		return g, fmt.Errorf("gateway: %w", err)
	}
	if err := waitStatus(ctx, g.upstream+"/v1/models", http.StatusOK); err != nil {
		return g, fmt.Errorf("demo upstream: %w", err)
	}
	return g, nil
}

// waitStatus polls url until it answers with want, for at most
// readyTimeout.
func waitStatus(ctx context.Context, url string, want int) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	last := errors.New("no answer")
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return nil
			}
			last = fmt.Errorf("status %d, want %d", resp.StatusCode, want)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %w", readyTimeout, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
