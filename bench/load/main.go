// Command load is the gateway's load benchmark. It builds the caddy binary,
// starts three processes on loopback ports (the demo model server, Caddy's
// plain reverse proxy in front of it, and the gateway in front of it), and
// sends the same workloads to all three, interleaved, to measure what the
// gateway adds over going direct and over a plain proxy: latency at p50
// and p99, throughput, and CPU time per request of the serving process.
//
//	go run ./bench/load [-n 6000] [-duration 6s] [-warmup 200] [-rounds 3] [-bin path] [-json] [-profile dir]
//
// With -soak it runs the gateway alone for -duration (default 10m) under a
// mix of every kind of call, sampling its memory, goroutines and store
// (see soak.go):
//
//	go run ./bench/load -soak -duration 10m [-soak-concurrency 16] [-soak-rate 400] [-soak-payload-ttl 2m] [-soak-sample 10s] [-profile dir]
//
// With -profile, the soak saves heap profiles of the gateway after its
// warm-up and at its end (soak.heap.start.pprof, soak.heap.end.pprof; read
// them with go tool pprof -base start end).
//
// See bench/README.md for how to read the report.
package main

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/modelgate/gateway/bench/internal/cmdutil"
)

// cpuRatioTarget is the budget for the gateway's CPU per request relative
// to the plain proxy's, checked at the highest concurrency, where per
// request costs dominate over idle overheads.
const (
	cpuRatioTarget      = 1.15
	cpuRatioConcurrency = 64
)

// settle is the pause after each round before CPU times are read, so that
// work the round caused but finished just after it (closing connections,
// the gateway's batched commit of call records) is counted in that round.
const settle = 150 * time.Millisecond

type options struct {
	bin      string
	n        int
	duration time.Duration
	warmup   int
	rounds   int
	json     bool
	// profile, when set, is a directory that receives a CPU profile of the
	// proxy and of the gateway per workload, taken after the measured
	// rounds so that profiling never colours the figures.
	profile        string
	profileSeconds int
	// only, when set, runs just the workloads whose name contains it.
	only string
	// gzip makes the gateway ask the upstream for gzip, as the plain
	// proxy does; by default it does not for a loopback upstream.
	gzip bool
	// soak runs the soak instead of the benchmark, for duration, with
	// soakConcurrency workers, sampling every soakSample.
	soak            bool
	soakConcurrency int
	soakSample      time.Duration
	// soakRate caps the soak's calls per second (0: as fast as it goes);
	// soakPayloadTTL is the gateway's payload_ttl during the soak.
	soakRate       int
	soakPayloadTTL time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "use this caddy binary instead of building ./cmd/caddy")
	flag.IntVar(&o.n, "n", 6000, "requests per target per workload, split across the rounds")
	flag.DurationVar(&o.duration, "duration", 6*time.Second, "time cap per target per workload, split across the rounds")
	flag.IntVar(&o.warmup, "warmup", 200, "unmeasured requests per target before each workload")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds of direct, proxy and gateway per workload")
	flag.BoolVar(&o.json, "json", false, "write a JSON report to stdout (the table goes to stderr)")
	flag.StringVar(&o.profile, "profile", "", "after the measured rounds, write CPU profiles of the proxy and the gateway per workload into this directory")
	flag.BoolVar(&o.gzip, "gzip", false, "make the gateway ask the upstream for gzip, as the plain proxy does (its default for a loopback upstream is not to)")
	flag.StringVar(&o.only, "only", "", "run only the workloads whose name contains this text, e.g. \"c=64\"")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 8, "length of each CPU profile under load")
	flag.BoolVar(&o.soak, "soak", false, "run the soak: the gateway alone, for -duration (default 10m here), under a mix of every kind of call, sampling RSS, goroutines and the store")
	flag.IntVar(&o.soakConcurrency, "soak-concurrency", 16, "concurrent clients of the soak")
	flag.DurationVar(&o.soakSample, "soak-sample", 10*time.Second, "how often the soak samples the gateway")
	flag.IntVar(&o.soakRate, "soak-rate", 400, "most calls per second of the soak, 0 for as many as the machine serves")
	flag.DurationVar(&o.soakPayloadTTL, "soak-payload-ttl", 2*time.Minute, "the gateway's payload_ttl during the soak, so that pruning runs under load (0: the gateway's default)")
	flag.Parse()
	if o.soak {
		durationSet := false
		flag.Visit(func(f *flag.Flag) { durationSet = durationSet || f.Name == "duration" })
		if !durationSet {
			o.duration = 10 * time.Minute
		}
		if o.duration <= 0 || o.soakConcurrency < 1 || o.soakSample <= 0 || o.soakRate < 0 || o.soakPayloadTTL < 0 || flag.NArg() > 0 {
			flag.Usage()
			os.Exit(2)
		}
		rep := cmdutil.Run("bench/load soak", o.json, func(ctx context.Context) (*soakReport, error) { return runSoak(ctx, o) }, printSoak)
		if rep.Unexpected > 0 || (rep.Flat != nil && !*rep.Flat) {
			os.Exit(1)
		}
		return
	}
	if o.n < 1 || o.rounds < 1 || o.profileSeconds < 1 || o.warmup < 0 || o.duration <= 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	rep := cmdutil.Run("bench/load", o.json, func(ctx context.Context) (*report, error) { return run(ctx, o) }, printTable)
	if rep.Errors > 0 {
		fmt.Fprintf(os.Stderr, "bench/load: %d failed requests; the figures above are not trustworthy\n", rep.Errors)
		os.Exit(1)
	}
}

// logf reports progress on stderr, leaving stdout to the report.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/load: "+format+"\n", args...)
}

// procSet is the three processes of a run.
type procSet struct {
	upstream, proxy, gateway *proc
	// proxyAdmin and gatewayAdmin are the admin endpoints' base URLs in
	// -profile runs, empty otherwise.
	proxyAdmin, gatewayAdmin string
}

func (s *procSet) all() []*proc {
	var ps []*proc
	for _, p := range []*proc{s.upstream, s.proxy, s.gateway} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// run does the whole benchmark. Every process it starts is stopped and the
// temp dir removed before it returns, whatever the outcome.
func run(ctx context.Context, o options) (*report, error) {
	dir, err := os.MkdirTemp("", "gateway-bench-")
	if err != nil {
		return nil, err
	}
	var procs procSet
	defer func() {
		var wg sync.WaitGroup
		for _, p := range procs.all() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.stop(5 * time.Second)
			}()
		}
		wg.Wait()
		os.RemoveAll(dir)
	}()

	bin := o.bin
	if bin == "" {
		logf("building ./cmd/caddy")
		t0 := time.Now()
		if bin, err = buildBinary(ctx, dir); err != nil {
			return nil, err
		}
		logf("built in %v", time.Since(t0).Round(time.Second))
	}

	ports, err := cmdutil.FreePorts(5)
	if err != nil {
		return nil, err
	}
	upPort, proxyPort, gwPort := ports[0], ports[1], ports[2]
	proxyPrelude, gwPrelude := globalPrelude, globalPrelude
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return nil, err
		}
		procs.proxyAdmin = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
		procs.gatewayAdmin = fmt.Sprintf("http://127.0.0.1:%d", ports[4])
		proxyPrelude, gwPrelude = profilePrelude(ports[3]), profilePrelude(ports[4])
	}
	client := newClient(cpuRatioConcurrency)
	auth := http.Header{"Authorization": {"Bearer " + benchKey}}

	// The upstream first: both front processes need it to answer.
	if procs.upstream, err = startProc(bin, dir, "upstream", upstreamCaddyfile(dir, upPort), upPort); err != nil {
		return nil, err
	}
	if err = procs.upstream.waitReady(ctx, client, "/v1/models", nil, time.Minute); err != nil {
		return nil, err
	}
	if procs.proxy, err = startProc(bin, dir, "proxy", proxyCaddyfile(proxyPrelude, proxyPort, upPort), proxyPort); err != nil {
		return nil, err
	}
	if procs.gateway, err = startProc(bin, dir, "gateway", gatewayCaddyfile(gwPrelude, dir, gwPort, upPort, o.gzip), gwPort); err != nil {
		return nil, err
	}
	if err = procs.proxy.waitReady(ctx, client, "/v1/models", nil, time.Minute); err != nil {
		return nil, err
	}
	if err = procs.gateway.waitReady(ctx, client, "/v1/models", auth, time.Minute); err != nil {
		return nil, err
	}
	logf("upstream %s, proxy %s, gateway %s", procs.upstream.base, procs.proxy.base, procs.gateway.base)

	rep := &report{
		Machine: machineInfo(ctx, bin),
		Settings: settings{
			Requests: o.n, Duration: o.duration.String(), Warmup: o.warmup, Rounds: o.rounds, GatewayGzip: o.gzip,
		},
	}
	b := &bench{o: o, client: client, procs: &procs, clkTck: rep.Machine.ClockTicks}
	ws := o.selected()
	if len(ws) == 0 {
		return nil, fmt.Errorf("no workload matches -only %q", o.only)
	}
	for _, w := range ws {
		wr, err := b.runWorkload(ctx, w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		rep.Workloads = append(rep.Workloads, wr)
		for _, t := range wr.Targets {
			rep.Errors += t.Errors
		}
	}
	if o.profile != "" {
		for _, w := range ws {
			if err := b.profileWorkload(ctx, w); err != nil {
				return nil, fmt.Errorf("profile %s: %w", w.name, err)
			}
		}
	}
	return rep, nil
}

// workload is one kind of traffic, sent to every target.
type workload struct {
	name        string
	concurrency int
	stream      bool
	// cross sends a chat request to a model whose provider speaks the
	// Anthropic dialect, so the gateway translates both ways.
	cross bool
}

// selected is the workloads o asks for.
func (o options) selected() []workload {
	var ws []workload
	for _, w := range workloads() {
		if strings.Contains(w.name, o.only) {
			ws = append(ws, w)
		}
	}
	return ws
}

func workloads() []workload {
	return []workload{
		{name: "chat c=1", concurrency: 1},
		{name: "chat c=64", concurrency: 64},
		{name: "chat stream 50 chunks c=16", concurrency: 16, stream: true},
		{name: "chat->anthropic c=64", concurrency: 64, cross: true},
	}
}

// targets returns the three targets of w, in the order direct, proxy,
// gateway. Direct and proxy get the same request; the gateway gets the
// same request with its model id and key. For the cross-dialect workload,
// direct and proxy send the Anthropic request the gateway's translation
// produces, so all three ask the upstream for the same work and the
// difference is the gateway's hop, translation included.
func (b *bench) targets(w workload) []target {
	const hello = `[{"role":"user","content":"bench hello"}]`
	jsonHeader := func(extra http.Header) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	auth := http.Header{"Authorization": {"Bearer " + benchKey}}
	delivery := []byte(`"delivery"`)
	var upPath, upBody, gwBody string
	var upMarker []byte
	switch {
	case w.cross:
		upPath = "/v1/messages"
		upBody = `{"model":"demo-claude","max_tokens":256,"messages":` + hello + `}`
		gwBody = `{"model":"demo-anthropic/demo-claude","max_tokens":256,"messages":` + hello + `}`
	case w.stream:
		msgs := `[{"role":"user","content":"bench [[words:50]]"}]`
		upPath = "/v1/chat/completions"
		upBody = `{"model":"demo-chat","stream":true,"messages":` + msgs + `}`
		gwBody = `{"model":"demo/demo-chat","stream":true,"messages":` + msgs + `}`
		upMarker = []byte("data: [DONE]")
	default:
		upPath = "/v1/chat/completions"
		upBody = `{"model":"demo-chat","messages":` + hello + `}`
		gwBody = `{"model":"demo/demo-chat","messages":` + hello + `}`
	}
	var upHeader http.Header
	if w.cross {
		upHeader = http.Header{"Anthropic-Version": {"2023-06-01"}}
	}
	return []target{
		{name: "direct", url: b.procs.upstream.base + upPath, header: jsonHeader(upHeader), body: []byte(upBody), marker: upMarker},
		{name: "proxy", url: b.procs.proxy.base + upPath, header: jsonHeader(upHeader), body: []byte(upBody), marker: upMarker},
		{name: "gateway", url: b.procs.gateway.base + "/v1/chat/completions", header: jsonHeader(auth), body: []byte(gwBody), marker: delivery},
	}
}

// bench holds what every workload shares.
type bench struct {
	o      options
	client *http.Client
	procs  *procSet
	clkTck int64
}

// cpuSnapshot is the CPU ticks of the three processes at one moment; ok is
// false where /proc is not available, and CPU figures are then left out.
type cpuSnapshot struct {
	upstream, proxy, gateway int64
	ok                       bool
}

func (b *bench) snapshot() cpuSnapshot {
	up, err1 := cpuTicks(b.procs.upstream.pid())
	px, err2 := cpuTicks(b.procs.proxy.pid())
	gw, err3 := cpuTicks(b.procs.gateway.pid())
	return cpuSnapshot{upstream: up, proxy: px, gateway: gw, ok: errors.Join(err1, err2, err3) == nil}
}

// checkAlive fails when a process has exited, with its last output.
func (b *bench) checkAlive() error {
	for _, p := range b.procs.all() {
		if p.exited() {
			return p.failure()
		}
	}
	return nil
}

// runWorkload probes, warms up and measures one workload on all targets.
func (b *bench) runWorkload(ctx context.Context, w workload) (workloadReport, error) {
	wr := workloadReport{Name: w.name, Concurrency: w.concurrency}
	ts := b.targets(w)

	for _, t := range ts {
		status, body, err := probe(ctx, b.client, t)
		if err != nil {
			return wr, fmt.Errorf("probe %s: %w", t.name, err)
		}
		if status == http.StatusOK && t.marker != nil && !strings.Contains(string(body), string(t.marker)) {
			return wr, fmt.Errorf("probe %s: 200 body without %s: %s", t.name, t.marker, snippet(body))
		}
		if status != http.StatusOK {
			// Translation to the Anthropic upstream may not be available
			// in every build of the gateway: that is reported, not fatal.
			if w.cross && t.name == "gateway" {
				wr.Skipped = true
				wr.SkipReason = fmt.Sprintf("gateway answered %d: %s", status, snippet(body))
				logf("%s: skipped (%s)", w.name, wr.SkipReason)
				return wr, nil
			}
			return wr, fmt.Errorf("probe %s: status %d: %s", t.name, status, snippet(body))
		}
	}

	perRoundN := (b.o.n + b.o.rounds - 1) / b.o.rounds
	perRoundD := b.o.duration / time.Duration(b.o.rounds)
	logf("%s: warm-up", w.name)
	if b.o.warmup > 0 {
		for _, t := range ts {
			runLoad(ctx, b.client, t, w.concurrency, b.o.warmup, perRoundD)
		}
	}
	if err := ctx.Err(); err != nil {
		return wr, err
	}

	agg := make([]loadResult, len(ts))
	for i := range agg {
		agg[i].statuses = map[int]int{}
	}
	rounds := make([][]roundReport, len(ts))
	upTicks := make([]int64, len(ts))
	var proxyTicks, gwTicks int64
	cpuOK := true

	logf("%s: %d rounds", w.name, b.o.rounds)
	time.Sleep(settle)
	before := b.snapshot()
	for r := range b.o.rounds {
		// Rotating who goes first spreads any drift within a round (a
		// neighbour's burst, frequency scaling) across all three targets.
		for k := range ts {
			i := (r + k) % len(ts)
			res := runLoad(ctx, b.client, ts[i], w.concurrency, perRoundN, perRoundD)
			if err := ctx.Err(); err != nil {
				return wr, err
			}
			time.Sleep(settle)
			after := b.snapshot()
			if err := b.checkAlive(); err != nil {
				return wr, err
			}
			cpuOK = cpuOK && before.ok && after.ok
			upTicks[i] += after.upstream - before.upstream
			proxyTicks += after.proxy - before.proxy
			gwTicks += after.gateway - before.gateway
			before = after

			rounds[i] = append(rounds[i], roundReport{
				Round: r + 1, Requests: res.requests, Errors: res.errors,
				ElapsedS: res.elapsed.Seconds(), RPS: rate(res.requests, res.elapsed),
			})
			el := agg[i].elapsed + res.elapsed
			agg[i].merge(&res)
			agg[i].elapsed = el
		}
	}

	sums := make([]summary, len(ts))
	for i, t := range ts {
		a := &agg[i]
		sums[i] = summarize(a.latencies)
		tr := targetReport{
			Target: t.name, Requests: a.requests, Errors: a.errors, ErrorDetail: a.errorDetail(),
			BodyChecks: a.checked, ElapsedS: a.elapsed.Seconds(), RPS: rate(a.requests, a.elapsed),
			MeanMs: ms(sums[i].Mean), P50Ms: ms(sums[i].P50), P99Ms: ms(sums[i].P99), MaxMs: ms(sums[i].Max),
			Rounds: rounds[i],
		}
		if cpuOK && a.requests > 0 {
			tr.UpstreamCPUTicks = upTicks[i]
			tr.UpstreamCPUUsPerReq = ptr(b.usPerReq(upTicks[i], a.requests))
			switch t.name {
			case "proxy":
				tr.HopCPUTicks = proxyTicks
				tr.HopCPUUsPerReq = ptr(b.usPerReq(proxyTicks, a.requests))
			case "gateway":
				tr.HopCPUTicks = gwTicks
				tr.HopCPUUsPerReq = ptr(b.usPerReq(gwTicks, a.requests))
			}
		}
		wr.Targets = append(wr.Targets, tr)
	}
	direct, proxy, gateway := sums[0], sums[1], sums[2]
	if direct.Count > 0 && proxy.Count > 0 {
		wr.ProxyAddedP50Ms = ptr(ms(proxy.P50 - direct.P50))
		wr.ProxyAddedP99Ms = ptr(ms(proxy.P99 - direct.P99))
	}
	if direct.Count > 0 && gateway.Count > 0 {
		wr.GatewayAddedP50Ms = ptr(ms(gateway.P50 - direct.P50))
		wr.GatewayAddedP99Ms = ptr(ms(gateway.P99 - direct.P99))
	}
	if p, g := wr.Targets[1].HopCPUUsPerReq, wr.Targets[2].HopCPUUsPerReq; p != nil && g != nil && *p > 0 {
		wr.CPURatio = ptr(*g / *p)
	}
	if w.concurrency == cpuRatioConcurrency {
		wr.CPURatioTarget = ptr(cpuRatioTarget)
	}
	return wr, nil
}

func (b *bench) usPerReq(ticks int64, requests int) float64 {
	return float64(ticks) * 1e6 / float64(b.clkTck) / float64(requests)
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

// report is the whole result; its JSON form is the -json output.
type report struct {
	Machine   machine          `json:"machine"`
	Settings  settings         `json:"settings"`
	Workloads []workloadReport `json:"workloads"`
	// Errors is the total of failed measured requests; any makes the
	// command exit with status 1.
	Errors int `json:"errors"`
}

type machine struct {
	NProc        int    `json:"nproc"`
	CPUModel     string `json:"cpu_model"`
	GoVersion    string `json:"go_version"`
	Platform     string `json:"platform"`
	Date         string `json:"date"`
	LoadAvg      string `json:"loadavg_at_start"`
	ClockTicks   int64  `json:"clk_tck"`
	CaddyVersion string `json:"caddy_version"`
}

type settings struct {
	Requests int    `json:"requests_per_target"`
	Duration string `json:"time_cap_per_target"`
	Warmup   int    `json:"warmup_per_target"`
	Rounds   int    `json:"rounds"`
	// GatewayGzip tells whether the gateway asked its upstream for gzip
	// (-gzip), as the plain proxy always does.
	GatewayGzip bool `json:"gateway_gzip"`
}

type workloadReport struct {
	Name        string         `json:"name"`
	Concurrency int            `json:"concurrency"`
	Skipped     bool           `json:"skipped,omitempty"`
	SkipReason  string         `json:"skip_reason,omitempty"`
	Targets     []targetReport `json:"targets,omitempty"`
	// Added latencies are target minus direct at the same percentile.
	ProxyAddedP50Ms   *float64 `json:"proxy_added_p50_ms,omitempty"`
	ProxyAddedP99Ms   *float64 `json:"proxy_added_p99_ms,omitempty"`
	GatewayAddedP50Ms *float64 `json:"gateway_added_p50_ms,omitempty"`
	GatewayAddedP99Ms *float64 `json:"gateway_added_p99_ms,omitempty"`
	// CPURatio is the gateway's CPU per request over the proxy's.
	CPURatio       *float64 `json:"cpu_ratio_gateway_over_proxy,omitempty"`
	CPURatioTarget *float64 `json:"cpu_ratio_target,omitempty"`
}

type targetReport struct {
	Target      string  `json:"target"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	ErrorDetail string  `json:"error_detail,omitempty"`
	BodyChecks  int     `json:"body_checks"`
	ElapsedS    float64 `json:"elapsed_s"`
	RPS         float64 `json:"requests_per_s"`
	MeanMs      float64 `json:"mean_ms"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	// Hop CPU is the serving process's own (proxy or gateway); direct has
	// no hop of its own.
	HopCPUTicks    int64    `json:"hop_cpu_ticks,omitempty"`
	HopCPUUsPerReq *float64 `json:"hop_cpu_us_per_req,omitempty"`
	// Upstream CPU is the demo server's, during this target's rounds.
	UpstreamCPUTicks    int64         `json:"upstream_cpu_ticks,omitempty"`
	UpstreamCPUUsPerReq *float64      `json:"upstream_cpu_us_per_req,omitempty"`
	Rounds              []roundReport `json:"rounds"`
}

type roundReport struct {
	Round    int     `json:"round"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	ElapsedS float64 `json:"elapsed_s"`
	RPS      float64 `json:"requests_per_s"`
}

// machineInfo describes where the numbers were taken; they mean little
// without it.
func machineInfo(ctx context.Context, bin string) machine {
	m := machine{
		NProc:      runtime.NumCPU(),
		CPUModel:   cpuModel(),
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
		Date:       time.Now().UTC().Format(time.RFC3339),
		ClockTicks: clockTicks(ctx),
	}
	// The binary's own toolchain is the one that matters when -bin points
	// at a binary built elsewhere.
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		m.GoVersion = bi.GoVersion
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(vctx, bin, "version").Output(); err == nil {
		m.CaddyVersion, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// printTable writes the human-readable report.
func printTable(out io.Writer, rep *report) {
	m := rep.Machine
	fmt.Fprintf(out, "gateway load benchmark, %s\n", m.Date)
	fmt.Fprintf(out, "machine: %d CPUs, %s, %s, %s, caddy %s, load avg at start %s\n",
		m.NProc, m.CPUModel, m.Platform, m.GoVersion, m.CaddyVersion, m.LoadAvg)
	s := rep.Settings
	fmt.Fprintf(out, "per target and workload: up to %d requests or %s, in %d interleaved rounds, after %d warm-up requests\n",
		s.Requests, s.Duration, s.Rounds, s.Warmup)
	gz := "no (its default for a loopback upstream; the plain proxy does)"
	if s.GatewayGzip {
		gz = "yes, as the plain proxy does (-gzip)"
	}
	fmt.Fprintf(out, "gateway asks the upstream for gzip: %s\n\n", gz)

	// Names are padded to a fixed width by hand so that they read left
	// aligned while tabwriter right-aligns the figures.
	label := func(workload, target string) string { return fmt.Sprintf("%-28s %-8s", workload, target) }
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\treqs\terrs\treq/s\tp50\tp99\t+p50\t+p99\thop cpu/req\tupstream cpu/req\t\n", label("workload", "target"))
	for _, w := range rep.Workloads {
		if w.Skipped {
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\t\n", label(w.Name, "skipped"))
			continue
		}
		for i, t := range w.Targets {
			name := ""
			if i == 0 {
				name = w.Name
			}
			addP50, addP99 := "-", "-"
			switch t.Target {
			case "proxy":
				addP50, addP99 = signedMs(w.ProxyAddedP50Ms), signedMs(w.ProxyAddedP99Ms)
			case "gateway":
				addP50, addP99 = signedMs(w.GatewayAddedP50Ms), signedMs(w.GatewayAddedP99Ms)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.3fms\t%.3fms\t%s\t%s\t%s\t%s\t\n",
				label(name, t.Target), t.Requests, t.Errors, t.RPS, t.P50Ms, t.P99Ms,
				addP50, addP99, us(t.HopCPUUsPerReq), us(t.UpstreamCPUUsPerReq))
		}
	}
	tw.Flush()

	fmt.Fprintln(out, "\ngateway CPU/req ÷ proxy CPU/req:")
	for _, w := range rep.Workloads {
		switch {
		case w.Skipped:
			fmt.Fprintf(out, "  %-28s skipped: %s\n", w.Name, w.SkipReason)
		case w.CPURatio == nil:
			fmt.Fprintf(out, "  %-28s n/a (no CPU times)\n", w.Name)
		case w.CPURatioTarget != nil:
			verdict := "within"
			if *w.CPURatio > *w.CPURatioTarget {
				verdict = "OVER"
			}
			fmt.Fprintf(out, "  %-28s %.2f  (%s the %.2f target)\n", w.Name, *w.CPURatio, verdict, *w.CPURatioTarget)
		default:
			fmt.Fprintf(out, "  %-28s %.2f\n", w.Name, *w.CPURatio)
		}
	}
	for _, w := range rep.Workloads {
		for _, t := range w.Targets {
			if t.ErrorDetail != "" {
				fmt.Fprintf(out, "errors, %s %s: %s\n", w.Name, t.Target, t.ErrorDetail)
			}
		}
	}
}

func signedMs(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.3fms", *v)
}

func us(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0fµs", *v)
}
