package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// containerImage is the tag the README and this test give the image.
const containerImage = "modelgate"

// TestContainerImage builds the Dockerfile's image with podman, as the
// README does, and runs it on its default config: the gateway answers a
// routed call through the published port. The final stage is checked to be
// FROM scratch with a static binary in any case; the build needs podman
// (Debian package podman) and the Go build image, which it pulls once.
func TestContainerImage(t *testing.T) {
	root := repoRoot(t)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	for _, l := range strings.Split(string(df), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.EqualFold(f[0], "FROM") {
			froms = append(froms, f[1])
		}
	}
	if len(froms) == 0 || froms[len(froms)-1] != "scratch" {
		t.Fatalf("the Dockerfile's final stage is FROM %v, want scratch", froms)
	}
	if !strings.Contains(string(df), "CGO_ENABLED=0") {
		t.Fatal("the Dockerfile does not build a static binary (CGO_ENABLED=0)")
	}
	if v, want := dockerfileArg(t, string(df), "GO_VERSION"), goVersionOf(t, root); "go"+v != want {
		t.Fatalf("the Dockerfile builds with Go %s, go.mod asks for %s", v, want)
	}

	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed; to run this test, install it (apt-get install podman) and run it again")
	}
	goImage := ""
	for _, f := range froms {
		if strings.Contains(f, "golang:") {
			goImage = f
		}
	}
	goImage = strings.ReplaceAll(goImage, "${GO_VERSION}", dockerfileArg(t, string(df), "GO_VERSION"))
	if out, err := exec.Command(podman, "image", "exists", goImage).CombinedOutput(); err != nil {
		if out, err := exec.Command(podman, "pull", goImage).CombinedOutput(); err != nil {
			t.Skipf("podman cannot pull the build image %s (no registry access?): %v\n%s", goImage, err, lastLines(string(out), 5))
		}
	} else if len(out) > 0 {
		t.Logf("podman image exists: %s", out)
	}

	// The module cache and build cache of this machine go into the build,
	// so it needs no network beyond the base image.
	modCache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	buildCache := strings.TrimSpace(goEnv(t, "GOCACHE"))
	tag := fmt.Sprintf("%s:test-%d", containerImage, time.Now().UnixNano())
	build := exec.Command(podman, "build", "-t", tag,
		"-v", modCache+":/go/pkg/mod", "-v", buildCache+":/root/.cache/go-build",
		"--build-arg", "VERSION=v0.0.0-container-test", ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("podman build: %v\n%s", err, lastLines(string(out), 40))
	}
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", tag).Run() })

	if out, err := exec.Command(podman, "run", "--rm", tag, "version").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "github.com/modelgate/gateway v0.0.0-container-test") {
		t.Fatalf("caddy version in the image: %v\n%s", err, out)
	}

	port := freePort(t)
	name := fmt.Sprintf("modelgate-test-%d", time.Now().UnixNano())
	run := exec.Command(podman, "run", "-d", "--rm", "--name", name, "-p", fmt.Sprintf("127.0.0.1:%d:8080", port), tag)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(podman, "stop", "-t", "20", name).CombinedOutput(); err != nil {
			t.Logf("podman stop: %v\n%s", err, out)
		}
	})
	logs := func() string {
		out, _ := exec.Command(podman, "logs", name).CombinedOutput()
		return lastLines(string(out), 30)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container's gateway did not answer within 60 s:\n%s", logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(chatBody("router-1", "hello from a container", "")))
	req.Header.Set("Authorization", "Bearer "+demoKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ans := gjson.ParseBytes(body)
	if resp.StatusCode != http.StatusOK || ans.Get("choices.0.message.content").String() != "Echo: hello from a container" {
		t.Fatalf("routed call in the container: %s %s\n%s", resp.Status, body, logs())
	}
}

// goEnv is `go env name`.
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command(goCommand(t), "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(out)
}

// dockerfileArg is the default value of a Dockerfile ARG.
func dockerfileArg(t *testing.T, df, name string) string {
	for _, l := range strings.Split(df, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "ARG "+name+"="); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("the Dockerfile has no ARG %s with a default", name)
	return ""
}

// goVersionOf is the go directive of the module's go.mod ("go1.26.8").
func goVersionOf(t *testing.T, root string) string {
	raw, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return "go" + strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go directive")
	return ""
}
