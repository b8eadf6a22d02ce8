package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file's family run the gateway as its users do: the
// binary built from cmd/caddy, started as a child process from a Caddyfile
// of the repository, driven over the network and through its CLI.

// repoRoot is the module root, the parent of this package's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// goCommand is the go command that runs these tests.
func goCommand(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command on PATH or in GOROOT: %v", err)
	}
	return p
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// caddyBinary builds the gateway's binary, `go build ./cmd/caddy`, once per
// test process, under the data directory TestMain removes at the end.
func caddyBinary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir := filepath.Join(os.Getenv("XDG_DATA_HOME"), "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "caddy")
		binaryErr = goBuild(t, repoRoot(t), nil, "-o", binaryPath, "./cmd/caddy")
	})
	if binaryErr != nil {
		t.Fatalf("building the gateway: %v", binaryErr)
	}
	return binaryPath
}

// goBuild runs `go build args...` in dir, with env added to this process's
// environment.
func goBuild(t testing.TB, dir string, env []string, args ...string) error {
	cmd := exec.Command(goCommand(t), append([]string{"build"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// gatewayEnvVars are the variables the configs read: a child process gets
// them from its test only, never from the environment the tests run in.
var gatewayEnvVars = []string{
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LOCAL_LLM_BASE_URL", "GATEWAY_DOMAIN",
	"STATE_DIRECTORY", "RUNTIME_DIRECTORY", "LOGS_DIRECTORY", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME",
}

// childEnv is this process's environment without gatewayEnvVars, with
// Caddy's data and config directories and HOME in home, and extra
// ("NAME=value") last.
func childEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, v := range gatewayEnvVars {
			if name == v {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	return append(env, extra...)
}

// syncBuffer collects a child's output from its two pipes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is a child process a test started.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// startProcess starts bin with args in dir. The test's cleanup interrupts
// it (Caddy stops gracefully on SIGINT, committing its records) and kills
// it if it has not exited after 30 s.
func startProcess(t *testing.T, dir string, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), out: new(syncBuffer), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop interrupts the process and waits for it to exit.
func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop on SIGINT within 30 s; killed", p.cmd.Path)
	}
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitStatus polls url with client until it answers want, for at most 60 s
// (a cold start creates Caddy's local CA and the store). It fails the test
// early when the process dies.
func waitStatus(t *testing.T, p *process, client *http.Client, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if p.exited() {
			t.Fatalf("%s exited (%v) before %s answered:\n%s", p.cmd.Path, p.err, url, p.out.String())
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %d within 60 s (last: %s):\n%s", url, want, last, p.out.String())
}

// runCommand runs bin with args to completion and returns its stdout,
// failing the test (with the output) when it fails.
func runCommand(t *testing.T, dir string, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
