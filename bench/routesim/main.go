// Command routesim shows what router-1 learns: it runs the gateway in this
// process with the demo upstream behind it, a reference model and a pool of
// cheaper models of graded quality (the demo upstream answers a -qNN model
// correctly for NN% of prompts), tags every call with an operation whose
// ship gate checks the answers, and reports what the routed traffic cost
// next to always pinning the reference, how often the answers passed the
// gate, and how the traffic moved between models over time.
//
//	go run ./bench/routesim [-n 3000] [-c 8] [-window 250] [-seed 1] [-json]
//	go run ./bench/routesim -gateway http://localhost:8080/v1 -key <key> [-n ...]
//
// With -gateway it drives a running gateway instead, one started from
// Caddyfile.example, whose router-1 has the same catalog.
//
// See bench/routesim/README.md for how to read the report.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/gateway/bench/internal/cmdutil"
)

type options struct {
	n           int
	concurrency int
	window      int
	seed        uint64
	json        bool
	// gateway is the API base URL of a running gateway to drive instead
	// of one in this process; key is its API key.
	gateway string
	key     string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 3000, "chat calls to send through router-1")
	flag.IntVar(&o.concurrency, "c", 8, "calls in flight at once")
	flag.IntVar(&o.window, "window", 250, "calls per window of the traffic-over-time table")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the prompts' random words")
	flag.BoolVar(&o.json, "json", false, "write a JSON report to stdout (the text report goes to stderr)")
	flag.StringVar(&o.gateway, "gateway", "", "API base URL of a running gateway started from Caddyfile.example (e.g. http://localhost:8080/v1); default: run one in this process")
	flag.StringVar(&o.key, "key", "", "API key for -gateway")
	flag.Parse()
	if (o.gateway == "") != (o.key == "") {
		fmt.Fprintln(os.Stderr, "bench/routesim: -gateway and -key go together")
		os.Exit(2)
	}
	if o.n < 1 || o.concurrency < 1 || o.window < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	cmdutil.Run("bench/routesim", o.json, func(ctx context.Context) (*report, error) { return run(ctx, o) }, printReport)
}

// logf reports progress on stderr, leaving stdout to the report.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/routesim: "+format+"\n", args...)
}

// run does the whole simulation. The in-process Caddy is stopped and the
// temp dir removed before it returns, whatever the outcome.
func run(ctx context.Context, o options) (*report, error) {
	if o.gateway != "" {
		a := newAPI(strings.TrimRight(o.gateway, "/"), o.key, o.concurrency)
		if err := a.checkCatalog(ctx, catalog); err != nil {
			return nil, err
		}
		logf("gateway %s", a.base)
		return simulate(ctx, a, o, time.Now())
	}
	dir, err := os.MkdirTemp("", "gateway-routesim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	start := time.Now()
	g, err := startGateway(ctx, dir, catalog)
	if g != nil {
		// Stopping flushes the gateway's last call records and closes its
		// store before the temp dir goes.
		defer func() {
			if err := caddy.Stop(); err != nil {
				logf("stopping caddy: %v", err)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	logf("gateway %s, demo upstream %s", g.base, g.upstream)

	return simulate(ctx, newAPI(g.base, simKey, o.concurrency), o, start)
}

// simulate sets up the operation, sends the calls through router-1 and
// analyses what they cost and how the traffic moved.
func simulate(ctx context.Context, a *api, o options, start time.Time) (*report, error) {
	if err := a.setUp(ctx); err != nil {
		return nil, err
	}

	ps := prompts(o.n, o.seed)
	step := max(o.n/10, 1)
	logf("sending %d calls to %s, %d at a time", o.n, routerModel, o.concurrency)
	results := sendAll(ctx, a, ps, o.concurrency, func(done int) {
		if done%step == 0 || done == o.n {
			logf("%d/%d calls", done, o.n)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	missing, err := attachServed(ctx, a, results)
	if err != nil {
		return nil, fmt.Errorf("reading the call records: %w", err)
	}
	if missing > 0 {
		logf("%d answered calls have no record; their served model is unknown", missing)
	}

	rep := analyze(results, catalog, o.window)
	rep.Settings.Concurrency = o.concurrency
	rep.Settings.Seed = o.seed
	rep.ElapsedS = time.Since(start).Seconds()
	return &rep, nil
}
