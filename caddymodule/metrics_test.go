package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// metricsTestCall is a served chat call of demo/demo-chat, with its record.
func metricsTestCall() (*call, *reliability.Call) {
	p := &routing.Provider{Name: "demo"}
	m := &routing.Model{ID: "demo/demo-chat", Paths: []routing.Path{{Provider: "demo", UpstreamModel: "demo-chat", Quantization: "full"}}}
	cand := routing.Candidate{Path: &m.Paths[0], Provider: p, Model: m}
	c := &call{d: translate.Chat, req: translate.Request{Model: "demo/demo-chat"}, start: time.Now(), id: "chatcmpl-x",
		route: routing.Route{Model: m, Tier: "standard", Candidates: []routing.Candidate{cand}}}
	c.served = cand
	cost, upstream := 0.0021, 0.0014
	rec := &reliability.Call{Status: reliability.CallSucceeded, Provider: "demo", ModelVersion: "demo-chat", Tier: "standard",
		PromptTokens: 1200, CompletionTokens: 300, CacheReadTokens: 1000, CostUSD: &cost, UpstreamCostUSD: &upstream,
		Attempts: []reliability.Attempt{{Provider: "demo", UpstreamModel: "demo-chat", Status: 200}}}
	return c, rec
}

// TestObserveCallCounts: a recorded call adds to its request counter,
// its token usage by class and its cost, under the labels of its model,
// provider and tier.
func TestObserveCallCounts(t *testing.T) {
	c, rec := metricsTestCall()
	c.req.Model = "demo/counted" // series of its own, whatever else ran
	labels := []string{"chat.completions", "openai", "chat", "demo/counted", "demo/demo-chat", "demo", "standard"}
	c.observe(rec)
	c.observe(rec)
	if got := counterValue(t, mx.requests.WithLabelValues(append(labels, "success")...)); got != 2 {
		t.Errorf("requests = %v, want 2", got)
	}
	if got := counterValue(t, mx.billed.WithLabelValues(labels...)); got != 2*0.0021 {
		t.Errorf("billed = %v, want %v", got, 2*0.0021)
	}
	if got := counterValue(t, mx.upstreamCost.WithLabelValues(labels...)); got != 2*0.0014 {
		t.Errorf("upstream cost = %v, want %v", got, 2*0.0014)
	}
	for typ, want := range map[string]float64{"input": 2400, "output": 600, "cache_read": 2000} {
		h := histogramOf(t, mx.tokens, append(labels, typ)...)
		if h.GetSampleSum() != want || h.GetSampleCount() != 2 {
			t.Errorf("%s tokens: sum %v over %d calls, want %v over 2", typ, h.GetSampleSum(), h.GetSampleCount(), want)
		}
	}
	if c.logged.input != 1200 || c.logged.fallbacks != 0 || c.logged.outcome != outcomeSuccess {
		t.Errorf("log fields kept %+v", c.logged)
	}
}

// counterValue reads a counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var pb dto.Metric
	if err := c.Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetCounter().GetValue()
}

// histogramOf reads one child of a histogram vector.
func histogramOf(t *testing.T, v *prometheus.HistogramVec, labels ...string) *dto.Histogram {
	t.Helper()
	m, err := v.GetMetricWithLabelValues(labels...)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 1)
	m.(prometheus.Collector).Collect(ch)
	var pb dto.Metric
	if err := (<-ch).Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram()
}

// TestOutcomeOf: each way a call ends has its outcome.
func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		name string
		rec  reliability.Call
		want outcome
	}{
		{"served", reliability.Call{Status: reliability.CallSucceeded, Provider: "p"}, outcomeSuccess},
		{"cache hit", reliability.Call{Status: reliability.CallSucceeded, Provider: "p", Cache: "hit"}, outcomeCacheHit},
		{"no path served", reliability.Call{Status: reliability.CallFailed, Attempts: []reliability.Attempt{{Status: 503}}}, outcomeUpstreamError},
		{"no path could take it", reliability.Call{Status: reliability.CallFailed,
			Attempts: []reliability.Attempt{{Error: attemptUntranslatable + " x"}}}, outcomeUnsupported},
		{"refused", reliability.Call{Status: reliability.CallFailed, Provider: "p", Attempts: []reliability.Attempt{{Status: 400}}}, outcomeUpstreamRejected},
		{"client left", reliability.Call{Status: reliability.CallFailed, Provider: "p", Stream: true, Error: msgClientClosed,
			Attempts: []reliability.Attempt{{Status: 200}}}, outcomeClientClosed},
		{"stream broke", reliability.Call{Status: reliability.CallFailed, Provider: "p", Stream: true, Error: "broke",
			Attempts: []reliability.Attempt{{Status: 200}}}, outcomeStreamError},
		{"unreadable", reliability.Call{Status: reliability.CallFailed, Provider: "p", Attempts: []reliability.Attempt{{Status: 200}}}, outcomeInvalidResponse},
	} {
		if got := outcomeOf(&c.rec); got != c.want {
			t.Errorf("%s: outcome %s, want %s", c.name, got, c.want)
		}
	}
}

// TestFallbackCause: each failed attempt names why its path was left.
func TestFallbackCause(t *testing.T) {
	for _, c := range []struct {
		a    reliability.Attempt
		want string
	}{
		{reliability.Attempt{Error: "skipped: cooling down after repeated failures"}, "cooling_down"},
		{reliability.Attempt{Error: "request translation: x"}, "untranslatable"},
		{reliability.Attempt{Error: "waiting for the upstream: context canceled"}, "queue_timeout"},
		{reliability.Attempt{Error: "the upstream did not answer in time"}, "timeout"},
		{reliability.Attempt{Error: "dial tcp 127.0.0.1:9: connect: connection refused"}, "connect_error"},
		{reliability.Attempt{Status: 429}, "rate_limited"},
		{reliability.Attempt{Status: 529}, "server_error"},
		{reliability.Attempt{Status: 503}, "server_error"},
		{reliability.Attempt{Status: 401}, "auth"},
		{reliability.Attempt{Status: 404}, "not_found"},
		{reliability.Attempt{Status: 408}, "timeout"},
	} {
		if got := fallbackCause(&c.a); got != c.want {
			t.Errorf("fallbackCause(%+v) = %q, want %q", c.a, got, c.want)
		}
	}
}

// TestAttemptErrorType: an attempt's error type is its failing status, or
// what failed without one; a client that left is no upstream error.
func TestAttemptErrorType(t *testing.T) {
	for _, c := range []struct {
		name string
		aw   attemptWriter
		err  error
		want string
	}{
		{"answered", attemptWriter{status: 200, mode: modeBuffer}, nil, ""},
		{"503", attemptWriter{status: 503, mode: modeCapture}, nil, "503"},
		{"400", attemptWriter{status: 400, mode: modeBuffer}, nil, "400"},
		{"refused connection", attemptWriter{}, errors.New("dial tcp: connection refused"), "connect_error"},
		{"timeout", attemptWriter{}, context.DeadlineExceeded, "timeout"},
		{"stalled stream", attemptWriter{status: 200, mode: modeStream}, fmt.Errorf("%w: no data", errStalled), "timeout"},
		{"cut off", attemptWriter{status: 200, mode: modeStream}, errAborted, "aborted"},
		{"client left", attemptWriter{status: 200, mode: modeStream, sinkErr: http.ErrHandlerTimeout}, errAborted, ""},
		{"bad stream", attemptWriter{status: 200, mode: modeStream, sinkErr: &streamDefect{err: errors.New("x")}}, errAborted, "invalid_stream"},
	} {
		if got := attemptErrorType(&c.aw, c.err); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBoundedLabels: past its cap, a label's new values share one.
func TestBoundedLabels(t *testing.T) {
	b := boundedLabels{max: 2}
	for _, c := range []struct{ in, want string }{{"a", "a"}, {"b", "b"}, {"c", otherLabel}, {"a", "a"}, {"", noneLabel}} {
		if got := b.value(c.in); got != c.want {
			t.Errorf("value(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestObserveCallAllocatesNothing: once a label combination was seen,
// counting a call allocates nothing.
func TestObserveCallAllocatesNothing(t *testing.T) {
	c, rec := metricsTestCall()
	c.observe(rec)
	if n := testing.AllocsPerRun(100, func() { c.observe(rec) }); n != 0 {
		t.Errorf("observe allocates %v times a call, want 0", n)
	}
	aw := &attemptWriter{status: 200, mode: modeBuffer}
	cand := c.route.Candidates[0]
	t0 := time.Now()
	c.attemptDone(nil, cand, t0, aw, nil)
	if n := testing.AllocsPerRun(100, func() { c.attemptDone(nil, cand, t0, aw, nil) }); n != 0 {
		t.Errorf("attemptDone allocates %v times an attempt, want 0", n)
	}
}

// BenchmarkObserveCall is what the metrics, the (absent) span and the
// log fields cost a served call: its record observed and its one upstream
// attempt counted.
func BenchmarkObserveCall(b *testing.B) {
	c, rec := metricsTestCall()
	aw := &attemptWriter{status: 200, mode: modeBuffer}
	cand := c.route.Candidates[0]
	b.ReportAllocs()
	for b.Loop() {
		c.attemptDone(nil, cand, c.start, aw, nil)
		c.observe(rec)
	}
}

// BenchmarkObserveCallParallel is BenchmarkObserveCall from every core at
// once, on the same label combination.
func BenchmarkObserveCallParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c, rec := metricsTestCall()
		aw := &attemptWriter{status: 200, mode: modeBuffer}
		cand := c.route.Candidates[0]
		for pb.Next() {
			c.attemptDone(nil, cand, c.start, aw, nil)
			c.observe(rec)
		}
	})
}
