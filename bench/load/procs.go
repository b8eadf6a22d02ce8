package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// benchKey is the gateway key of the benchmark's org. It is a fixed test
// value: the gateway runs on a fresh store in a temp dir and listens on
// loopback only.
const benchKey = "mg_live_bench000000000000000000000"

// moduleRoot returns the directory of the go.mod that encloses the working
// directory, so that the binary is built from the same tree as the command.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the gateway module: run from its tree, or pass -bin")
	}
	return filepath.Dir(gomod), nil
}

// buildBinary builds ./cmd/caddy into dir once, so that every process of
// the run is the same binary and no compile time lands in a measurement.
func buildBinary(ctx context.Context, dir string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "caddy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/caddy")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/caddy: %w\n%s", err, out.Bytes())
	}
	return bin, nil
}

// globalPrelude is the global options block every process shares: no admin
// endpoint (so that the three processes do not contend for :2019), nothing
// persisted outside the temp dir, and only errors logged, because logging
// every request would cost CPU that the benchmark would then measure.
const globalPrelude = `	admin off
	persist_config off
	log default {
		output stderr
		level ERROR
	}
`

// profilePrelude is globalPrelude with the admin endpoint on a loopback
// port, for -profile runs: Caddy serves /debug/pprof/ there.
func profilePrelude(adminPort int) string {
	return strings.Replace(globalPrelude, "admin off", fmt.Sprintf("admin 127.0.0.1:%d", adminPort), 1)
}

// upstreamCaddyfile serves the demo model server. The llm block exists only
// because the demo handler lives in the llm app's module set; the store
// keeps it from writing under the user's data dir.
func upstreamCaddyfile(dir string, port int) string {
	return fmt.Sprintf(`{
%s	llm {
		store %s
	}
}

http://127.0.0.1:%d {
	llm_demo_upstream
}
`, globalPrelude, filepath.Join(dir, "up.db"), port)
}

// proxyCaddyfile is the baseline: Caddy's stock reverse proxy in front of
// the same upstream, with nothing else on the path.
func proxyCaddyfile(prelude string, port, upstreamPort int) string {
	return fmt.Sprintf(`{
%s}

http://127.0.0.1:%d {
	reverse_proxy 127.0.0.1:%d
}
`, prelude, port, upstreamPort)
}

// gatewayCaddyfile is the gateway with one org and the demo upstream as two
// providers, one per dialect, so that a cross-dialect call is possible.
func gatewayCaddyfile(prelude, dir string, port, upstreamPort int, gzip bool) string {
	// Without -gzip the gateway's own default applies: a loopback
	// upstream is not asked to compress.
	compression := ""
	if gzip {
		compression = "\n\t\t\tcompression on"
	}
	return fmt.Sprintf(`{
%s	llm {
		store %s
		org bench {
			key %s
		}
		provider demo {
			dialect openai
			base_url http://127.0.0.1:%d/v1%s
		}
		provider demo-anthropic {
			dialect anthropic
			base_url http://127.0.0.1:%d/v1%s
		}
		model demo/demo-chat {
			price 0.5 1.5
		}
		model demo-anthropic/demo-claude {
			price 0.8 4
		}
	}
}

http://127.0.0.1:%d {
	route /v1/* {
		llm_gateway
		llm_reliability
	}
}
`, prelude, filepath.Join(dir, "gw.db"), benchKey, upstreamPort, compression, upstreamPort, compression, port)
}

// proc is one running caddy process.
type proc struct {
	name   string
	base   string // http://127.0.0.1:<port>
	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid once done is closed
}

// startProc writes config into dir and starts `bin run` on it. The child's
// data and config dirs point into dir so that nothing outside it is touched,
// and proxy variables are dropped so that every hop stays on loopback.
func startProc(bin, dir, name, config string, port int) (*proc, error) {
	cfg := filepath.Join(dir, name+".Caddyfile")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = childEnv(dir)
	p := &proc{
		name:   name,
		base:   fmt.Sprintf("http://127.0.0.1:%d", port),
		cmd:    cmd,
		stderr: &tailBuffer{max: 16 << 10},
		done:   make(chan struct{}),
	}
	cmd.Stdout = p.stderr
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func childEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "XDG_DATA_HOME", "XDG_CONFIG_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
	)
}

// pid returns the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// failure describes an unexpected exit, with the end of the process's log.
func (p *proc) failure() error {
	return fmt.Errorf("%s exited (%v); its last output:\n%s", p.name, p.err, p.stderr.String())
}

// waitReady polls path until the process answers HTTP at all, or fails when
// the process exits or timeout passes. Any status counts: readiness is about
// the listener and the loaded config, and the first probe checks statuses.
func (p *proc) waitReady(ctx context.Context, client *http.Client, path string, header http.Header, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if p.exited() {
			return p.failure()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
		if err != nil {
			return err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err == nil {
			drain(resp)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer on %s within %v: %v\n%s", p.name, p.base, timeout, err, p.stderr.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop asks the process to shut down gracefully (Caddy stops on SIGINT)
// and kills it if it has not exited within grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpuTicks returns the user plus system CPU time of the whole process (all
// threads) in clock ticks, from fields 14 and 15 of /proc/<pid>/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces, so
	// fields are counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14 and stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return utime + stime, nil
}

// clockTicks returns the kernel's clock tick rate for /proc times, as
// `getconf CLK_TCK` reports it; 100 Hz is the value on nearly every Linux
// build, so it is the fallback when getconf is missing.
func clockTicks(ctx context.Context) int64 {
	out, err := exec.CommandContext(ctx, "getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// tailBuffer keeps the last max bytes written to it: enough of a child's
// log to explain a failure without holding a long run's output in memory.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
