package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profileWorkload loads the proxy and then the gateway with w for
// -profile-seconds each while Caddy's admin endpoint records a CPU
// profile, and writes <dir>/<workload>.<target>.pprof. Read them with
// `go tool pprof -top <file>`.
func (b *bench) profileWorkload(ctx context.Context, w workload) error {
	ts := b.targets(w)
	admins := map[string]string{"proxy": b.procs.proxyAdmin, "gateway": b.procs.gatewayAdmin}
	secs := b.o.profileSeconds
	for _, t := range ts {
		admin := admins[t.name]
		if admin == "" {
			continue
		}
		logf("%s: profiling %s for %ds", w.name, t.name, secs)
		done := make(chan error, 1)
		path := filepath.Join(b.o.profile, fileName(w.name)+"."+t.name+".pprof")
		go func() { done <- fetchProfile(ctx, admin, secs, path) }()
		// The load outlasts the profile by a little so that the whole
		// profile is taken under load; n is only a safety bound.
		res := runLoad(ctx, b.client, t, w.concurrency, 50000*secs, time.Duration(secs)*time.Second+500*time.Millisecond)
		if err := <-done; err != nil {
			return err
		}
		if res.errors > 0 {
			return fmt.Errorf("%s: %d failed requests under profiling: %s", t.name, res.errors, res.errorDetail())
		}
		logf("%s: %s profile of %d requests in %s", w.name, t.name, res.requests, path)
	}
	return nil
}

// fetchProfile asks Caddy's admin endpoint for a CPU profile of secs
// seconds and writes it to path.
func fetchProfile(ctx context.Context, admin string, secs int, path string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", admin, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("fetch profile: status %d: %s", resp.StatusCode, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write profile %s: %w", path, err)
	}
	return f.Close()
}

// fileName turns a workload name into a file name part.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r == '>':
			return '-'
		}
		return '_'
	}, strings.ToLower(name))
}
