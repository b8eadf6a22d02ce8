package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestReadme keeps README.md true: every Caddyfile snippet in it adapts and
// validates with the gateway's binary, and every command in it runs, in
// order, the way a newcomer would type it, against a gateway started from
// Caddyfile.example by the README's own command. The example's ports
// (8080, 9099, 2019) are replaced by free ones, in the config and in every
// command. A command the test does not know how to check fails the test, so
// the README cannot gain an unchecked command either.
func TestReadme(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(string(src))
	bin := caddyBinary(t)

	t.Run("snippets", func(t *testing.T) {
		n := 0
		for _, b := range blocks {
			if b.kind != blockCaddyfile {
				continue
			}
			n++
			dir := t.TempDir()
			file := filepath.Join(dir, "Caddyfile")
			text, whole := b.caddyfile()
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"adapt", "--config", file}
			what := "adapt"
			if whole {
				args, what = append(args, "--validate"), "adapt and validate"
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = dir, childEnv(dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("README.md:%d: the Caddyfile snippet does not %s: %v\n%s\n%s", b.line, what, err, b.text, lastLines(string(out), 5))
			}
		}
		if n < 3 {
			t.Errorf("found %d Caddyfile snippets in README.md; the parser lost some", n)
		}
	})

	t.Run("commands", func(t *testing.T) {
		r := newReadmeRunner(t, root, bin)
		n := 0
		for _, b := range blocks {
			if b.kind != blockCommands {
				continue
			}
			for _, c := range b.commands() {
				n++
				r.run(c, b.line)
			}
		}
		if !r.started {
			t.Error("README.md never starts the gateway on Caddyfile.example")
		}
		if n < 10 {
			t.Errorf("found %d commands in README.md; the parser lost some", n)
		}
		for _, want := range []string{"router-1", "tier batch", "router-embed-1", "count_tokens", "routesim -gateway", "keys create", "xcaddy build", "metrics"} {
			if !r.covered[want] {
				t.Errorf("README.md has no command showing %s", want)
			}
		}
	})
}

// blockKind tells what a README code block holds.
type blockKind int

const (
	blockOther blockKind = iota
	blockCaddyfile
	blockCommands
)

// readmeBlock is a code block of the README (indented or fenced), or an
// inline code span that is a command.
type readmeBlock struct {
	line int // of its first line, 1-based
	text string
	kind blockKind
}

// commandWords start the lines of a command block.
var commandWords = []string{"go", "caddy", "./caddy", "curl", "sudo", "xcaddy", "podman"}

// envAssignment is a leading NAME=value of a command line.
var envAssignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// inlineCurl finds the commands written inline, in code spans.
var inlineCurl = regexp.MustCompile("`(curl [^`]+)`")

// readmeBlocks returns the code blocks of a markdown text: fenced blocks,
// blocks indented by four spaces after a blank line, and inline code spans
// that hold a curl command.
func readmeBlocks(src string) []readmeBlock {
	lines := strings.Split(src, "\n")
	var out []readmeBlock
	add := func(line int, body []string) {
		for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		if len(body) == 0 {
			return
		}
		b := readmeBlock{line: line, text: strings.Join(body, "\n")}
		b.kind = classify(b.text)
		out = append(out, b)
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			start := i + 1
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				body = append(body, lines[i])
			}
			add(start+1, body)
		case strings.HasPrefix(l, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == ""):
			start := i
			var body []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				body = append(body, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			add(start+1, body)
		default:
			for _, m := range inlineCurl.FindAllStringSubmatch(l, -1) {
				out = append(out, readmeBlock{line: i + 1, text: m[1], kind: blockCommands})
			}
		}
	}
	return out
}

// classify tells a Caddyfile (its first line opens a block) from commands
// (its first word is a command) from anything else (code, output).
func classify(text string) blockKind {
	first := ""
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			first = l
			break
		}
	}
	words := strings.Fields(first)
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) == 0:
		return blockOther
	case slices.Contains(commandWords, words[0]):
		return blockCommands
	case strings.HasSuffix(first, "{"):
		return blockCaddyfile
	}
	return blockOther
}

// llmOptions are the subdirectives of the llm global option: a snippet that
// starts with one is a fragment of that option.
var llmOptions = []string{"store", "key_prefix", "max_body_size", "commit_batch", "commit_delay", "router", "pricing",
	"rate_limit", "cache", "sales_email", "smtp", "fair_use", "org", "provider", "model"}

// caddyfile is the snippet as a whole Caddyfile, and whether it is whole
// as written. A snippet of global options (it starts with an option's
// name, such as `llm {`) goes inside the global options block; a fragment
// of the llm option (`model ... {`) inside `llm` too, and is only adapted:
// it may name providers declared elsewhere.
func (b readmeBlock) caddyfile() (string, bool) {
	first := strings.Fields(b.text)[0]
	switch {
	case first == "{" || strings.ContainsAny(first, ":./") || first == "localhost":
		return b.text + "\n", true
	case slices.Contains(llmOptions, first):
		return "{\nllm {\n" + b.text + "\n}\n}\n", false
	}
	return "{\n" + b.text + "\n}\n", true
}

// commands returns the block's commands, lines ended by a backslash joined
// to the next.
func (b readmeBlock) commands() []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(b.text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(l, "\\"); ok {
			cur += rest + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// shellWords splits a command line as a POSIX shell does for the forms the
// README uses: words, 'single' and "double" quotes, backslash escapes.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '#' && !inWord:
			// A comment runs to the end of the line.
			i = len(s)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case strings.IndexByte("|&;<>()$`", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q in %q is not something this test runs", c, s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// readmeRunner runs the README's commands in order.
type readmeRunner struct {
	t    *testing.T
	root string
	bin  string
	// dir is the newcomer's checkout: Caddyfile.example with its ports
	// replaced, and Caddyfile.production.
	dir  string
	home string
	// ports replaces the example's ports in configs and commands.
	ports *strings.Replacer
	// gateway is the process the README's run command started.
	gateway *process
	started bool
	// built is the binary a README `go build -o caddy` made, and
	// builtVersion the version its -ldflags set.
	built, builtVersion string
	// ids holds the last id of each prefix ("chatcmpl-", "op_") seen in an
	// answer or made by the fixture, for the placeholders ("chatcmpl-...")
	// of later commands.
	ids map[string]string
	// installed maps a path a README `install` writes to its source.
	installed map[string]string
	// covered notes what the commands showed, for the final check.
	covered map[string]bool
}

func newReadmeRunner(t *testing.T, root, bin string) *readmeRunner {
	dir := t.TempDir()
	ports := map[string]int{":8080": freePort(t), ":9099": freePort(t), ":2019": freePort(t)}
	var pairs []string
	for from, to := range ports {
		pairs = append(pairs, from, fmt.Sprintf(":%d", to))
	}
	r := &readmeRunner{t: t, root: root, bin: bin, dir: dir, home: filepath.Join(dir, "home"), ports: strings.NewReplacer(pairs...),
		ids: map[string]string{}, installed: map[string]string{}, covered: map[string]bool{}}
	example, err := os.ReadFile(filepath.Join(root, "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	r.write("Caddyfile.example", r.ports.Replace(string(example)))
	prod, err := os.ReadFile(filepath.Join(root, "Caddyfile.production"))
	if err != nil {
		t.Fatal(err)
	}
	r.write("Caddyfile.production", string(prod))
	return r
}

func (r *readmeRunner) write(name, content string) {
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// placeholder is an id left out of a command: "chatcmpl-...", "op_...",
// or a key: "mg_live_..." stands for the last key `llm keys create`
// printed.
var placeholder = regexp.MustCompile(`\b([a-z]+[-_](?:live_)?)\.\.\.`)

// run runs one README command (line is where its block starts).
func (r *readmeRunner) run(line string, at int) {
	t := r.t
	t.Helper()
	words, err := shellWords(r.ports.Replace(line))
	if err != nil {
		t.Fatalf("README.md:%d: %v", at, err)
	}
	var env []string
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		env = append(env, words[0])
		words = words[1:]
	}
	for i, w := range words {
		words[i] = placeholder.ReplaceAllStringFunc(w, func(p string) string { return r.id(strings.TrimSuffix(p, "..."), at) })
	}
	where := fmt.Sprintf("README.md:%d: %s", at, line)
	switch {
	case words[0] == "curl":
		r.curl(where, words[1:])
	case words[0] == "go" && len(words) > 2 && words[1] == "run" && words[2] == "./cmd/caddy":
		r.caddy(where, r.bin, env, words[3:])
	case words[0] == "./caddy":
		if r.built == "" {
			t.Fatalf("%s: no earlier `go build -o caddy` made ./caddy", where)
		}
		r.caddy(where, r.built, env, words[1:])
	case words[0] == "go" && len(words) > 1 && words[1] == "build":
		r.goBuild(where, env, words[2:])
	case words[0] == "go" && len(words) > 2 && words[1] == "run" && words[2] == "./bench/routesim":
		r.routesim(where, words[3:])
	case words[0] == "go" && len(words) > 2 && words[1] == "run" && words[2] == "./bench/load":
		// The load benchmark takes half a minute and measures this
		// machine; `go vet ./...` compiles it, and bench/load has tests.
	case words[0] == "go" && strings.Join(words, " ") == "go test ./...":
		// This is the command that runs this test (and .ci/run does).
	case words[0] == "xcaddy":
		if got := strings.Join(words, " "); got != "xcaddy build "+caddyVersion(t)+" --with github.com/modelgate/gateway" {
			t.Errorf("%s: TestXcaddyStyleBuild builds `xcaddy build %s --with github.com/modelgate/gateway`; update one or the other", where, caddyVersion(t))
		}
		r.covered["xcaddy build"] = true
	case words[0] == "podman":
		// TestContainerImage builds the image and runs it as written here;
		// it checks these lines name its image and files.
		r.podman(where, words[1:])
	case words[0] == "sudo":
		r.sudo(where, words[1:])
	default:
		t.Errorf("%s: this test does not know how to run or check this command", where)
	}
}

// id resolves a placeholder prefix to an id seen earlier, or made by the
// fixture for the admin commands.
func (r *readmeRunner) id(prefix string, at int) string {
	if id, ok := r.ids[prefix]; ok {
		return id
	}
	if prefix == "op_" || prefix == "evr_" || prefix == "tr_" {
		r.fixture()
		if id, ok := r.ids[prefix]; ok {
			return id
		}
	}
	r.t.Fatalf("README.md:%d: no %s... id was seen before this command", at, prefix)
	return ""
}

// caddy runs the gateway's binary with a README command's arguments.
func (r *readmeRunner) caddy(where, bin string, env, args []string) {
	t := r.t
	// Without --address or --config, the CLI talks to the default admin
	// address, which is the example's; CADDY_ADMIN moves that default to
	// where the example's admin API listens here.
	env = append(childEnv(r.home, "CADDY_ADMIN=localhost"+r.ports.Replace(":2019")), env...)
	if len(args) > 0 && args[0] == "run" {
		if !slices.Equal(args, []string{"run", "--config", "Caddyfile.example"}) {
			t.Fatalf("%s: the README starts the gateway with `run --config Caddyfile.example` only", where)
		}
		r.gateway = startProcess(t, r.dir, env, bin, args...)
		waitStatus(t, r.gateway, http.DefaultClient, "http://127.0.0.1"+r.ports.Replace(":8080")+"/v1/models", http.StatusUnauthorized)
		r.started = true
		return
	}
	out := runCommand(t, r.dir, env, bin, args...)
	joined := strings.Join(args, " ")
	switch {
	case strings.HasPrefix(joined, "llm keys create"):
		if !keyPattern.MatchString(strings.TrimSpace(out)) {
			t.Errorf("%s: printed %q, not a key", where, out)
		}
		r.ids["mg_live_"] = strings.TrimSpace(out)
		r.covered["keys create"] = true
	case joined == "version":
		want := "github.com/modelgate/gateway "
		if bin == r.built && r.builtVersion != "" {
			want += r.builtVersion
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s: %q does not name the gateway's version (%q)", where, out, want)
		}
	case strings.HasPrefix(joined, "list-modules"):
		for _, m := range []string{"llm", "http.handlers.llm_gateway", "http.handlers.llm_reliability", "admin.api.llm"} {
			if !slices.Contains(strings.Fields(out), m) {
				t.Errorf("%s: does not list %s:\n%s", where, m, out)
			}
		}
	}
}

// goBuild runs a README `go build`, writing the binary to the test's
// directory instead of the checkout.
func (r *readmeRunner) goBuild(where string, env, args []string) {
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) || args[i+1] != "caddy" || args[len(args)-1] != "./cmd/caddy" {
		r.t.Fatalf("%s: the test runs `go build [flags] -o caddy [flags] ./cmd/caddy` only", where)
	}
	args = slices.Clone(args)
	args[i+1] = filepath.Join(r.dir, "caddy")
	if err := goBuild(r.t, r.root, env, args...); err != nil {
		r.t.Fatalf("%s: %v", where, err)
	}
	r.built = args[i+1]
	if m := regexp.MustCompile(`caddymodule\.Version=(\S+)`).FindStringSubmatch(strings.Join(args, " ")); m != nil {
		r.builtVersion = m[1]
	}
}

// routesim runs the routing simulation against the README's gateway.
func (r *readmeRunner) routesim(where string, args []string) {
	if !r.started {
		r.t.Fatalf("%s: the gateway is not running yet", where)
	}
	cmd := exec.Command(goCommand(r.t), append([]string{"run", "./bench/routesim"}, args...)...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("%s: %v\n%s\n%s", where, err, stdout.String(), lastLines(stderr.String(), 20))
	}
	for _, want := range []string{"saving vs always-reference", "traffic by served model", "demo-mid-q97"} {
		if !strings.Contains(stdout.String(), want) {
			r.t.Errorf("%s: the report lacks %q:\n%s", where, want, stdout.String())
		}
	}
	if slices.Contains(args, "-gateway") {
		r.covered["routesim -gateway"] = true
	}
}

// curl sends a README curl command with Go's client and expects a 2xx
// answer with a JSON body.
func (r *readmeRunner) curl(where string, args []string) {
	t := r.t
	method, url := "", ""
	var body *string
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s", "-S", "-sS":
		case "-X", "-H", "-d", "--data":
			if i+1 >= len(args) {
				t.Fatalf("%s: %s without a value", where, a)
			}
			v := args[i+1]
			i++
			switch a {
			case "-X":
				method = v
			case "-H":
				name, value, ok := strings.Cut(v, ":")
				if !ok {
					t.Fatalf("%s: header %q", where, v)
				}
				header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
			default:
				body = &v
			}
		default:
			if strings.HasPrefix(a, "-") || url != "" {
				t.Fatalf("%s: the test does not know curl's %q", where, a)
			}
			url = a
		}
	}
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	if method == "" {
		method = http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
	}
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
		if header.Get("Content-Type") == "" {
			// What curl sends with -d.
			header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if !r.started {
		t.Fatalf("%s: the gateway is not running yet", where)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", where, err)
	}
	if req.URL.Path == "/metrics" {
		// Prometheus text, with the calls the README made before.
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("\nllm_gateway_requests_total{")) {
			t.Fatalf("%s: answered %s, want 200 with the gateway's metrics: %.600s", where, resp.Status, out)
		}
		r.covered["metrics"] = true
		return
	}
	if resp.StatusCode/100 != 2 || !json.Valid(out) {
		t.Fatalf("%s: answered %s, want 2xx with a JSON body: %.600s", where, resp.Status, out)
	}
	r.note(url, body, resp.Header, out)
}

// note remembers the ids of an answer and what the command showed.
func (r *readmeRunner) note(url string, body *string, h http.Header, out []byte) {
	ans := gjson.ParseBytes(out)
	for _, id := range []gjson.Result{ans.Get("id"), ans.Get("data.0.id")} {
		if m := regexp.MustCompile(`^([a-z]+[-_])`).FindString(id.String()); m != "" {
			r.ids[m] = id.String()
		}
	}
	if body == nil {
		return
	}
	req := gjson.Parse(*body)
	switch {
	case strings.HasSuffix(url, "/count_tokens"):
		if ans.Get("input_tokens").Type != gjson.Number || h.Get("X-Gateway-Token-Count") == "" {
			r.t.Errorf("%s: not a token count: %s", url, out)
		}
		r.covered["count_tokens"] = true
	case req.Get("model").String() == "router-1" && req.Get("tier").String() == "batch":
		if ans.Get("delivery.tier").String() != "batch" || !ans.Get("delivery.eta_ms").Exists() {
			r.t.Errorf("batch call: no batch delivery with eta_ms: %s", out)
		}
		r.covered["tier batch"] = true
	case req.Get("model").String() == "router-1":
		d := ans.Get("delivery")
		if !strings.HasPrefix(ans.Get("choices.0.message.content").String(), "Echo: ") || d.Get("cost_usd").Type != gjson.Number {
			r.t.Errorf("routed call: no answer or no cost: %s", out)
		}
		r.covered["router-1"] = true
	case req.Get("model").String() == "router-embed-1":
		if len(ans.Get("data.0.embedding").Array()) == 0 {
			r.t.Errorf("routed embeddings call: no embedding: %.300s", out)
		}
		r.covered["router-embed-1"] = true
	}
}

// fixture makes, on the README's gateway, what its admin commands act on:
// an operation with a ship gate that has scored a call (op_..., evr_...)
// and a training request from a golden dataset (tr_...).
func (r *readmeRunner) fixture() {
	t := r.t
	base := "http://127.0.0.1" + r.ports.Replace(":8080") + "/v1"
	post := func(path, body string, want int) gjson.Result {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+demoKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("fixture: POST %s: %s: %s", path, resp.Status, out)
		}
		return gjson.ParseBytes(out)
	}
	get := func(path string) gjson.Result {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+demoKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return gjson.ParseBytes(out)
	}
	ev := post("/evaluators", `{"name":"readme echoes","kind":"regex","config":{"pattern":"^Echo: "}}`, http.StatusCreated).Get("id").String()
	op := post("/operations", fmt.Sprintf(`{"key":"readme_op","name":"README","ship_gates":[{"evaluator_id":%q,"min_score":0.5}]}`, ev),
		http.StatusCreated).Get("id").String()
	call := post("/chat/completions", chatBody("demo/demo-chat", "scored for the readme", `"metadata":{"operation_id":"readme_op"}`),
		http.StatusOK).Get("id").String()
	eventually(t, "the eval pass scores the fixture's call", func() error {
		if !get("/calls/" + call).Get("eval_pass").IsObject() {
			return fmt.Errorf("call %s not scored yet", call)
		}
		return nil
	})
	ds := post("/datasets", fmt.Sprintf(`{"operation_id":%q,"name":"readme"}`, op), http.StatusCreated).Get("id").String()
	post("/datasets/"+ds+"/items", `{"items":[{"input":"hi","expected_output":"Echo: hi"}]}`, http.StatusCreated)
	evaluation := post("/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q]}`, ds, ev), http.StatusCreated).Get("id").String()
	eventually(t, "the fixture's evaluation is done", func() error {
		if s := get("/evaluations/" + evaluation).Get("status").String(); s != "done" {
			return fmt.Errorf("evaluation %s", s)
		}
		return nil
	})
	post("/datasets/"+ds+"/promote", "", http.StatusOK)
	tr := post("/datasets/"+ds+"/training", `{"notes":"README"}`, http.StatusCreated).Get("id").String()
	r.ids["op_"], r.ids["evr_"], r.ids["tr_"] = op, ev, tr
}

// podman checks a README podman command against what TestContainerImage
// runs: the image's tag, and the files it names.
func (r *readmeRunner) podman(where string, args []string) {
	switch {
	case len(args) > 0 && args[0] == "build":
		if !slices.Equal(args, []string{"build", "-t", containerImage, "."}) {
			r.t.Errorf("%s: TestContainerImage builds with `podman build -t %s .`", where, containerImage)
		}
	case len(args) > 0 && (args[0] == "run" || args[0] == "exec"):
		if args[0] == "run" && !slices.Contains(args, containerImage) {
			r.t.Errorf("%s: runs another image than %s", where, containerImage)
		}
		for i, a := range args {
			if a == "--env-file" && i+1 < len(args) {
				r.mustExist(where, args[i+1])
			}
			if a == "--config" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "/etc/modelgate/") {
				r.t.Errorf("%s: the image keeps its configs in /etc/modelgate", where)
			}
		}
	default:
		r.t.Errorf("%s: this test does not know podman %s", where, strings.Join(args, " "))
	}
}

// sudo checks the host set-up commands, which a test cannot run: what they
// install exists in the checkout, the unit they enable is the one
// installed, and the caddy commands read the config installed.
func (r *readmeRunner) sudo(where string, args []string) {
	switch {
	case len(args) > 0 && args[0] == "install":
		rest := args[1:]
		var files []string
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case "-D":
			case "-m":
				i++
			default:
				files = append(files, rest[i])
			}
		}
		if len(files) != 2 {
			r.t.Fatalf("%s: install of %d paths, want source and destination", where, len(files))
		}
		if files[0] == "caddy" {
			if r.built == "" {
				r.t.Errorf("%s: no earlier `go build -o caddy`", where)
			}
		} else {
			r.mustExist(where, files[0])
		}
		r.installed[files[1]] = files[0]
	case len(args) > 1 && args[0] == "systemctl":
		unit := args[len(args)-1]
		if args[1] == "daemon-reload" {
			return
		}
		if _, ok := r.installed["/etc/systemd/system/"+unit+".service"]; !ok {
			r.t.Errorf("%s: unit %s was not installed by an earlier command", where, unit)
		}
	case len(args) > 0 && args[0] == "caddy":
		i := slices.Index(args, "--config")
		if i < 0 || i+1 >= len(args) {
			r.t.Errorf("%s: a caddy command on the host must name the installed config", where)
			return
		}
		if src := r.installed[args[i+1]]; src != "Caddyfile.production" {
			r.t.Errorf("%s: %s is not where Caddyfile.production was installed", where, args[i+1])
		}
		// TestProductionHTTPS runs these commands against the production
		// config, through its admin socket.
	default:
		r.t.Errorf("%s: this test does not know sudo %s", where, strings.Join(args, " "))
	}
	r.checkUnitPaths(where)
}

// checkUnitPaths checks that the systemd unit reads what the README
// installs: the binary, the config and the environment file.
func (r *readmeRunner) checkUnitPaths(where string) {
	if len(r.installed) == 0 {
		return
	}
	unit, err := os.ReadFile(filepath.Join(r.root, "packaging", "modelgate.service"))
	if err != nil {
		r.t.Fatal(err)
	}
	for dst, src := range r.installed {
		if strings.HasPrefix(dst, "/etc/systemd/") {
			continue
		}
		if (src == "caddy" || src == "Caddyfile.production" || strings.HasSuffix(src, ".env")) && !bytes.Contains(unit, []byte(dst)) {
			r.t.Errorf("%s: packaging/modelgate.service does not use %s (installed from %s)", where, dst, src)
		}
	}
}

func (r *readmeRunner) mustExist(where, path string) {
	if _, err := os.Stat(filepath.Join(r.root, path)); err != nil {
		r.t.Errorf("%s: %s is not in the repository", where, path)
	}
}

// caddyVersion is the Caddy version go.mod requires.
func caddyVersion(t *testing.T) string {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github.com/caddyserver/caddy/v2 (v\S+)`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("go.mod does not require Caddy")
	}
	return string(m[1])
}

// lastLines is the end of a long output.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
