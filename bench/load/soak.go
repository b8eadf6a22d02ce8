package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/modelgate/gateway/bench/internal/cmdutil"
)

// The soak runs the gateway for -duration under a mix of every kind of
// call it serves (the three completion shapes, embeddings, streams, cross-
// dialect translation, streams the upstream cuts, upstream errors and
// clients that leave mid-stream), sampling the gateway's memory,
// goroutines and store file as it goes, and measures what each call adds
// to the store once the process has stopped:
//
//	go run ./bench/load -soak -duration 10m

// soakKind is one kind of call of the soak's mix.
type soakKind struct {
	name   string
	weight int
	path   string
	body   func(r *rand.Rand) string
	// want is the status the gateway must answer.
	want int
	// abort reads the first bytes of the answer, then closes it.
	abort bool
}

// soakText is a user message of a random size: mostly short, sometimes a
// few KB, now and then 64 KB.
func soakText(r *rand.Rand, tail string) string {
	n := 20
	switch p := r.IntN(100); {
	case p >= 98:
		n = 64 << 10
	case p >= 80:
		n = 4 << 10
	}
	return strings.Repeat("soak ", n/5) + tail
}

func soakKinds() []soakKind {
	chat := func(model, text string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":%q}]}`, model, stream, text)
	}
	return []soakKind{
		{name: "chat", weight: 22, path: "/v1/chat/completions", want: 200,
			body: func(r *rand.Rand) string { return chat("demo/demo-chat", soakText(r, "[[words:40]]"), false) }},
		{name: "chat stream", weight: 15, path: "/v1/chat/completions", want: 200,
			body: func(r *rand.Rand) string { return chat("demo/demo-chat", soakText(r, "[[words:60]]"), true) }},
		{name: "chat->anthropic", weight: 10, path: "/v1/chat/completions", want: 200,
			body: func(r *rand.Rand) string {
				return chat("demo-anthropic/demo-claude", soakText(r, "[[words:30]]"), false)
			}},
		{name: "messages stream", weight: 10, path: "/v1/messages", want: 200,
			body: func(r *rand.Rand) string {
				return fmt.Sprintf(`{"model":"demo-anthropic/demo-claude","max_tokens":200,"stream":true,"messages":[{"role":"user","content":%q}]}`,
					soakText(r, "[[words:40]]"))
			}},
		{name: "responses", weight: 10, path: "/v1/responses", want: 200,
			body: func(r *rand.Rand) string {
				return fmt.Sprintf(`{"model":"demo/demo-chat","input":%q}`, soakText(r, "[[words:30]]"))
			}},
		{name: "embeddings", weight: 10, path: "/v1/embeddings", want: 200,
			body: func(r *rand.Rand) string {
				return fmt.Sprintf(`{"model":"demo/demo-embed","input":[%q,"second"]}`, soakText(r, ""))
			}},
		{name: "cut stream", weight: 8, path: "/v1/chat/completions", want: 200,
			body: func(r *rand.Rand) string { return chat("demo/demo-chat", "[[words:50]] [[cut:5]]", true) }},
		{name: "upstream error", weight: 8, path: "/v1/chat/completions", want: 503,
			body: func(r *rand.Rand) string { return chat("demo/demo-chat", "fail [[status:503]]", false) }},
		{name: "client leaves", weight: 7, path: "/v1/chat/completions", want: 200, abort: true,
			body: func(r *rand.Rand) string { return chat("demo/demo-chat", "[[words:200]]", true) }},
	}
}

// soakSample is the gateway's state at one moment of the soak.
//
// RSS counts the store's memory-mapped pages the process has touched
// (RssFile), which grow with the file and are the kernel's to drop; the
// process's own memory is RssAnon, which flatness is judged on.
type soakSample struct {
	ElapsedS   float64 `json:"elapsed_s"`
	Requests   int64   `json:"requests"`
	RSSMB      float64 `json:"rss_mb"`
	AnonMB     float64 `json:"rss_anon_mb"`
	FileMB     float64 `json:"rss_file_mb"`
	Goroutines int     `json:"goroutines"`
	StoreMB    float64 `json:"store_file_mb"`
}

// soakReport is the soak's result; its JSON form is the -json output.
type soakReport struct {
	Machine     machine        `json:"machine"`
	Duration    string         `json:"duration"`
	Concurrency int            `json:"concurrency"`
	Requests    int64          `json:"requests"`
	ByKind      map[string]int `json:"requests_by_kind"`
	// Unexpected counts transport errors and statuses other than the
	// kind's; any makes the command exit with status 1.
	Unexpected      int64        `json:"unexpected"`
	FirstUnexpected string       `json:"first_unexpected,omitempty"`
	Samples         []soakSample `json:"samples"`
	// GoroutinesIdleBefore and After are taken with no call in flight,
	// after a warm-up and after the load: a leak shows as the difference.
	GoroutinesIdleBefore int `json:"goroutines_idle_before"`
	GoroutinesIdleAfter  int `json:"goroutines_idle_after"`
	// GoroutineProfile is the start of the goroutine profile when the
	// count did not come back to its baseline.
	GoroutineProfile string `json:"goroutine_profile,omitempty"`
	// The process's own memory (RssAnon) over the first and the last
	// quarter of the samples (their medians), and the largest RSS.
	AnonFirstQuarterMB float64 `json:"rss_anon_first_quarter_mb"`
	AnonLastQuarterMB  float64 `json:"rss_anon_last_quarter_mb"`
	RSSMaxMB           float64 `json:"rss_max_mb"`
	// Store figures, read from the file after the gateway stopped.
	Calls             int64   `json:"calls_recorded"`
	StoreFileBytes    int64   `json:"store_file_bytes"`
	StoreInUseBytes   int64   `json:"store_in_use_bytes"`
	InUseBytesPerCall float64 `json:"store_in_use_bytes_per_call"`
	FileBytesPerCall  float64 `json:"store_file_bytes_per_call"`
	// BucketBytesPerCall splits the bytes in use per call by bucket
	// (calls, their indexes, the ledger...).
	BucketBytesPerCall map[string]float64 `json:"store_bucket_bytes_per_call"`
	// PayloadBytesPerCall is what the calls' request and response
	// payloads take per call, as stored (pruned ones as their marker).
	PayloadBytesPerCall float64 `json:"store_payload_bytes_per_call"`
	// Flat tells whether RSS and goroutines stayed flat; judged only for
	// soaks of a minute or more.
	Flat    *bool  `json:"flat,omitempty"`
	Verdict string `json:"verdict"`
}

// soakGatewayCaddyfile is the gateway of the soak: the bench gateway with
// an admin endpoint on a loopback port, for its goroutine count.
func soakGatewayCaddyfile(dir string, port, upstreamPort, adminPort int, payloadTTL time.Duration) string {
	prelude := strings.Replace(globalPrelude, "admin off", fmt.Sprintf("admin 127.0.0.1:%d", adminPort), 1)
	cfg := gatewayCaddyfile(prelude, dir, port, upstreamPort, false)
	cfg = strings.Replace(cfg, "\t\tmodel demo/demo-chat {", "\t\tmodel demo/demo-embed {\n\t\t\tembedding\n\t\t\tprice 0.02 0\n\t\t}\n\t\tmodel demo/demo-chat {", 1)
	// Calls are billed as usual; auto top-up keeps the org in credit for
	// however long the soak runs.
	cfg = strings.Replace(cfg, "\t\t\tkey "+benchKey+"\n", "\t\t\tkey "+benchKey+"\n\t\t\tauto_topup 100 100000\n", 1)
	if payloadTTL > 0 {
		// Payloads older than the TTL are pruned while the load runs, so
		// that the store's growth reaches its steady state.
		interval := max(payloadTTL/8, time.Second)
		cfg = strings.Replace(cfg, "\t\torg bench {", fmt.Sprintf("\t\tretention {\n\t\t\tpayload_ttl %s\n\t\t\tprune_interval %s\n\t\t}\n\t\torg bench {", payloadTTL, interval), 1)
	}
	return cfg
}

// runSoak runs the soak. Every process it starts is stopped and the temp
// dir removed before it returns.
func runSoak(ctx context.Context, o options) (*soakReport, error) {
	dir, err := os.MkdirTemp("", "gateway-soak-")
	if err != nil {
		return nil, err
	}
	var upstream, gateway *proc
	defer func() {
		for _, p := range []*proc{gateway, upstream} {
			if p != nil {
				p.stop(10 * time.Second)
			}
		}
		os.RemoveAll(dir)
	}()
	bin := o.bin
	if bin == "" {
		logf("building ./cmd/caddy")
		if bin, err = buildBinary(ctx, dir); err != nil {
			return nil, err
		}
	}
	ports, err := cmdutil.FreePorts(3)
	if err != nil {
		return nil, err
	}
	upPort, gwPort, adminPort := ports[0], ports[1], ports[2]
	client := newClient(o.soakConcurrency)
	if upstream, err = startProc(bin, dir, "upstream", upstreamCaddyfile(dir, upPort), upPort); err != nil {
		return nil, err
	}
	if err = upstream.waitReady(ctx, client, "/v1/models", nil, time.Minute); err != nil {
		return nil, err
	}
	if gateway, err = startProc(bin, dir, "gateway", soakGatewayCaddyfile(dir, gwPort, upPort, adminPort, o.soakPayloadTTL), gwPort); err != nil {
		return nil, err
	}
	auth := http.Header{"Authorization": {"Bearer " + benchKey}}
	if err = gateway.waitReady(ctx, client, "/v1/models", auth, time.Minute); err != nil {
		return nil, err
	}
	admin := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	store := filepath.Join(dir, "gw.db")

	rep := &soakReport{Machine: machineInfo(ctx, bin), Duration: o.duration.String(), Concurrency: o.soakConcurrency, ByKind: map[string]int{}}
	kinds := soakKinds()
	var requests atomic.Int64
	var mu sync.Mutex
	// load runs the mix until the deadline and returns when every call
	// has ended.
	load := func(deadline time.Time, count bool) {
		total := 0
		for _, k := range kinds {
			total += k.weight
		}
		var tokens <-chan time.Time
		if o.soakRate > 0 {
			t := time.NewTicker(time.Second / time.Duration(o.soakRate))
			defer t.Stop()
			tokens = t.C
		}
		var wg sync.WaitGroup
		for w := range o.soakConcurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), uint64(deadline.UnixNano())))
				byKind := map[string]int{}
				var unexpected int64
				first := ""
				for ctx.Err() == nil && time.Now().Before(deadline) {
					if tokens != nil {
						select {
						case <-tokens:
						case <-ctx.Done():
							continue
						case <-time.After(time.Until(deadline)):
							continue
						}
					}
					pick := r.IntN(total)
					k := kinds[0]
					for _, kk := range kinds {
						if pick < kk.weight {
							k = kk
							break
						}
						pick -= kk.weight
					}
					if err := soakCall(ctx, client, gateway.base, auth, k, k.body(r)); err != nil && ctx.Err() == nil {
						unexpected++
						if first == "" {
							first = k.name + ": " + err.Error()
						}
					}
					byKind[k.name]++
					if count {
						requests.Add(1)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				for k, n := range byKind {
					rep.ByKind[k] += n
				}
				rep.Unexpected += unexpected
				if rep.FirstUnexpected == "" {
					rep.FirstUnexpected = first
				}
			}()
		}
		wg.Wait()
	}
	// A warm-up fills the connection pools (each idle keep-alive
	// connection, to the client or to the upstream, holds goroutines), so
	// that the goroutines counted idle after it are the baseline a leak
	// would add to.
	warm := min(15*time.Second, max(o.duration/10, time.Second))
	logf("soak: warm-up for %s", warm)
	load(time.Now().Add(warm), false)
	if rep.GoroutinesIdleBefore, err = idleGoroutines(ctx, client, admin, -1); err != nil {
		return nil, err
	}
	heapProfile := func(name string) {
		if o.profile == "" {
			return
		}
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			logf("soak: %v", err)
			return
		}
		path := filepath.Join(o.profile, "soak.heap."+name+".pprof")
		if err := fetchPath(ctx, admin+"/debug/pprof/heap?gc=1", path); err != nil {
			logf("soak: heap profile: %v", err)
			return
		}
		logf("soak: heap profile %s", path)
	}
	heapProfile("start")
	logf("soak: %s at concurrency %d (rate cap %d/s), sampling every %s", o.duration, o.soakConcurrency, o.soakRate, o.soakSample)
	start := time.Now()
	sample := func() {
		s := soakSample{ElapsedS: time.Since(start).Seconds(), Requests: requests.Load()}
		pid := gateway.pid()
		s.RSSMB = float64(rssKB(pid, "VmRSS")) / 1024
		s.AnonMB = float64(rssKB(pid, "RssAnon")) / 1024
		s.FileMB = float64(rssKB(pid, "RssFile")) / 1024
		s.Goroutines, _ = goroutines(ctx, admin)
		if fi, err := os.Stat(store); err == nil {
			s.StoreMB = float64(fi.Size()) / (1 << 20)
		}
		rep.Samples = append(rep.Samples, s)
		logf("soak: %5.0fs %8d requests  rss %6.1f MB (anon %6.1f, file %6.1f)  goroutines %4d  store %7.1f MB",
			s.ElapsedS, s.Requests, s.RSSMB, s.AnonMB, s.FileMB, s.Goroutines, s.StoreMB)
	}
	done := make(chan struct{})
	go func() {
		load(start.Add(o.duration), true)
		close(done)
	}()
	tick := time.NewTicker(o.soakSample)
	sample()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			sample()
		case <-ctx.Done():
			<-done
			return nil, ctx.Err()
		}
	}
	tick.Stop()
	sample()
	if gateway.exited() {
		return nil, gateway.failure()
	}
	rep.Requests = requests.Load()
	if rep.GoroutinesIdleAfter, err = idleGoroutines(ctx, client, admin, rep.GoroutinesIdleBefore); err != nil {
		return nil, err
	}
	if rep.GoroutinesIdleAfter > rep.GoroutinesIdleBefore+5 {
		rep.GoroutineProfile = goroutineProfile(ctx, admin)
	}
	heapProfile("end")
	// A graceful stop commits every queued record; then the file is read.
	gateway.stop(30 * time.Second)
	if err := storeFigures(store, rep); err != nil {
		return nil, err
	}
	rssFigures(rep)
	return rep, nil
}

// soakCall makes one call and checks its status (and, for a complete
// stream, its end).
func soakCall(ctx context.Context, client *http.Client, base string, auth http.Header, k soakKind, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+k.path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}}
	for key, v := range auth {
		req.Header[key] = v
	}
	if k.path == "/v1/messages" {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if k.abort {
		// Read the first event, then leave.
		_, err := bufio.NewReader(resp.Body).ReadString('\n')
		if resp.StatusCode != k.want {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading body: %w", err)
	}
	if resp.StatusCode != k.want {
		return fmt.Errorf("status %d: %s", resp.StatusCode, snippet(b))
	}
	if k.name == "chat stream" && !bytes.Contains(b, []byte("[DONE]")) {
		return fmt.Errorf("stream without its end: %s", snippet(b))
	}
	return nil
}

// goroutines reads the gateway's goroutine count from the admin
// endpoint's profile ("goroutine profile: total N").
func goroutines(ctx context.Context, admin string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("goroutine count: %w", err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	_, n, ok := strings.Cut(strings.TrimSpace(line), "total ")
	if !ok {
		return 0, fmt.Errorf("goroutine count: unexpected first line %q", line)
	}
	return strconv.Atoi(n)
}

// idleGoroutines counts the gateway's goroutines with no call in flight,
// once the count has settled: the client's idle connections are closed
// first, and the count is read until it stops falling (or reaches want,
// when want is not negative), for at most 15 s.
func idleGoroutines(ctx context.Context, client *http.Client, admin string, want int) (int, error) {
	client.CloseIdleConnections()
	until := time.Now().Add(15 * time.Second)
	last := -1
	for {
		n, err := goroutines(ctx, admin)
		if err != nil {
			return 0, err
		}
		if (want >= 0 && n <= want) || n == last || time.Now().After(until) {
			return n, nil
		}
		last = n
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// goroutineProfile is the start of the gateway's goroutine profile, kept
// in the report when the goroutines did not come back to their baseline.
func goroutineProfile(ctx context.Context, admin string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	return string(b)
}

// fetchPath saves what the admin endpoint answers at url to path.
func fetchPath(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rssKB is one of the resident set sizes of pid ("VmRSS", "RssAnon",
// "RssFile"), from /proc/<pid>/status.
func rssKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// storeFigures reads the stopped gateway's store: how many calls it holds
// and the bytes its pages use.
func storeFigures(path string, rep *soakReport) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	rep.StoreFileBytes = fi.Size()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	defer db.Close()
	buckets := map[string]int64{}
	var payloads int64
	err = db.View(func(tx *bolt.Tx) error {
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			n := int64(s.BranchInuse + s.LeafInuse)
			rep.StoreInUseBytes += n
			buckets[string(name)] = n
			if string(name) == "calls" {
				rep.Calls = int64(s.KeyN)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket([]byte("calls")).ForEach(func(_, v []byte) error {
			payloads += int64(len(gjson.GetBytes(v, "request_payload").Raw) + len(gjson.GetBytes(v, "response_payload").Raw))
			return nil
		})
	})
	if err != nil {
		return err
	}
	if rep.Calls > 0 {
		c := float64(rep.Calls)
		rep.InUseBytesPerCall = float64(rep.StoreInUseBytes) / c
		rep.FileBytesPerCall = float64(rep.StoreFileBytes) / c
		rep.PayloadBytesPerCall = float64(payloads) / c
		rep.BucketBytesPerCall = map[string]float64{}
		for name, n := range buckets {
			if per := float64(n) / c; per >= 1 {
				rep.BucketBytesPerCall[name] = per
			}
		}
	}
	return nil
}

// rssFigures summarises the RSS samples and judges flatness.
func rssFigures(rep *soakReport) {
	var rss []float64
	for _, s := range rep.Samples {
		rss = append(rss, s.AnonMB)
		rep.RSSMaxMB = max(rep.RSSMaxMB, s.RSSMB)
	}
	q := len(rss) / 4
	if q == 0 {
		q = 1
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		if len(v) == 0 {
			return 0
		}
		return v[len(v)/2]
	}
	// The first sample is taken before any call: the first quarter starts
	// after it.
	if len(rss) > 1 {
		rep.AnonFirstQuarterMB = median(rss[1:min(len(rss), q+1)])
	}
	rep.AnonLastQuarterMB = median(rss[len(rss)-q:])
	d, _ := time.ParseDuration(rep.Duration)
	leak := rep.GoroutinesIdleAfter - rep.GoroutinesIdleBefore
	switch {
	case d < time.Minute:
		rep.Verdict = fmt.Sprintf("too short to judge flatness (%s); goroutines idle before %d, after %d", rep.Duration, rep.GoroutinesIdleBefore, rep.GoroutinesIdleAfter)
	default:
		flat := rep.AnonLastQuarterMB <= rep.AnonFirstQuarterMB*1.2+16 && leak <= 5
		rep.Flat = &flat
		rep.Verdict = fmt.Sprintf("own memory (RssAnon) %.0f MB -> %.0f MB (first -> last quarter), goroutines idle %d -> %d: ",
			rep.AnonFirstQuarterMB, rep.AnonLastQuarterMB, rep.GoroutinesIdleBefore, rep.GoroutinesIdleAfter)
		if flat {
			rep.Verdict += "flat"
		} else {
			rep.Verdict += "NOT flat"
		}
	}
}

// printSoak writes the human-readable soak report.
func printSoak(out io.Writer, rep *soakReport) {
	m := rep.Machine
	fmt.Fprintf(out, "gateway soak, %s\n", m.Date)
	fmt.Fprintf(out, "machine: %d CPUs, %s, %s, %s, caddy %s, load avg at start %s\n",
		m.NProc, m.CPUModel, m.Platform, m.GoVersion, m.CaddyVersion, m.LoadAvg)
	fmt.Fprintf(out, "%s at concurrency %d: %d requests, %d unexpected\n", rep.Duration, rep.Concurrency, rep.Requests, rep.Unexpected)
	kinds := make([]string, 0, len(rep.ByKind))
	for k := range rep.ByKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(out, "  %-16s %8d\n", k, rep.ByKind[k])
	}
	if rep.FirstUnexpected != "" {
		fmt.Fprintf(out, "first unexpected: %s\n", rep.FirstUnexpected)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "elapsed\trequests\trss\tanon\tfile (mmap)\tgoroutines\tstore file\t\n")
	for _, s := range rep.Samples {
		fmt.Fprintf(tw, "%.0fs\t%d\t%.1f MB\t%.1f MB\t%.1f MB\t%d\t%.1f MB\t\n", s.ElapsedS, s.Requests, s.RSSMB, s.AnonMB, s.FileMB, s.Goroutines, s.StoreMB)
	}
	tw.Flush()
	fmt.Fprintf(out, "goroutines with no call in flight: %d before, %d after\n", rep.GoroutinesIdleBefore, rep.GoroutinesIdleAfter)
	fmt.Fprintf(out, "store: %d calls; %.0f bytes in use per call, %.0f bytes of file per call (%.1f MB file, %.1f MB in use)\n",
		rep.Calls, rep.InUseBytesPerCall, rep.FileBytesPerCall, float64(rep.StoreFileBytes)/(1<<20), float64(rep.StoreInUseBytes)/(1<<20))
	names := make([]string, 0, len(rep.BucketBytesPerCall))
	for n := range rep.BucketBytesPerCall {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(rep.BucketBytesPerCall[b] - rep.BucketBytesPerCall[a]) })
	fmt.Fprintf(out, "  by bucket:")
	for _, n := range names {
		fmt.Fprintf(out, " %s %.0f", n, rep.BucketBytesPerCall[n])
	}
	fmt.Fprintf(out, "\n  payloads as stored: %.0f bytes per call\n", rep.PayloadBytesPerCall)
	fmt.Fprintf(out, "verdict: %s\n", rep.Verdict)
	if rep.GoroutineProfile != "" {
		fmt.Fprintf(out, "goroutine profile after the load:\n%s\n", rep.GoroutineProfile)
	}
}
