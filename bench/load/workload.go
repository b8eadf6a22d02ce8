package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sampleEvery is how often a worker checks a 200 body for its target's
// marker: often enough that a missing delivery block cannot hide, rarely
// enough that the check costs the load generator nothing measurable.
const sampleEvery = 8

// target is one server under load and the request it is sent.
type target struct {
	name   string // direct, proxy or gateway
	url    string
	header http.Header
	body   []byte
	// marker, when set, must appear in every sampled 200 body (the
	// gateway's delivery block, a stream's final event).
	marker []byte
}

// loadResult is what one run of load against one target measured.
type loadResult struct {
	// latencies holds the time to the last body byte of each 200 response;
	// failed requests are left out so that fast errors cannot flatter the
	// percentiles.
	latencies []time.Duration
	requests  int // completed, whatever their outcome
	errors    int // transport errors, non-200 statuses and failed body checks
	checked   int // sampled 200 bodies
	missing   int // sampled 200 bodies without the marker
	statuses  map[int]int
	firstErr  string
	elapsed   time.Duration
}

// newClient returns the one client every workload shares. Its pool keeps a
// connection per worker alive between requests, as a production client
// would, so that the servers are measured and not the TCP handshake.
// Compression is off because the load generator should not spend CPU on
// gzip, and so that the plain proxy and the gateway face the same request.
func newClient(maxConcurrency int) *http.Client {
	perHost := maxConcurrency + 8
	tr := &http.Transport{
		// Loopback only: never route benchmark traffic through a proxy.
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          4 * perHost,
		MaxIdleConnsPerHost:   perHost,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// runLoad sends t's request n times from conc workers, and stops issuing
// requests once limit has passed or ctx is done. Requests in flight at the
// time limit are allowed to finish: cutting them off would count them as
// errors and skew the tail.
func runLoad(ctx context.Context, client *http.Client, t target, conc, n int, limit time.Duration) loadResult {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		wg       sync.WaitGroup
		res      = loadResult{statuses: map[int]int{}}
		start    = time.Now()
		deadline = start.Add(limit)
	)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := loadResult{latencies: make([]time.Duration, 0, n/conc+1), statuses: map[int]int{}}
			var buf bytes.Buffer
			for i := 0; ; i++ {
				if next.Add(1) > int64(n) || ctx.Err() != nil || time.Now().After(deadline) {
					break
				}
				t0 := time.Now()
				status, err := send(ctx, client, t, &buf)
				d := time.Since(t0)
				w.requests++
				switch {
				case err != nil:
					w.errors++
					if w.firstErr == "" {
						w.firstErr = err.Error()
					}
				case status != http.StatusOK:
					w.errors++
					w.statuses[status]++
					if w.firstErr == "" {
						w.firstErr = fmt.Sprintf("status %d: %s", status, snippet(buf.Bytes()))
					}
				default:
					w.latencies = append(w.latencies, d)
					if t.marker != nil && i%sampleEvery == 0 {
						w.checked++
						if !bytes.Contains(buf.Bytes(), t.marker) {
							w.missing++
							w.errors++
							if w.firstErr == "" {
								w.firstErr = fmt.Sprintf("200 body without %s: %s", t.marker, snippet(buf.Bytes()))
							}
						}
					}
				}
			}
			mu.Lock()
			res.merge(&w)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// merge adds o's counts and samples to r; elapsed is set by the caller.
func (r *loadResult) merge(o *loadResult) {
	r.latencies = append(r.latencies, o.latencies...)
	r.requests += o.requests
	r.errors += o.errors
	r.checked += o.checked
	r.missing += o.missing
	for s, c := range o.statuses {
		r.statuses[s] += c
	}
	if r.firstErr == "" {
		r.firstErr = o.firstErr
	}
}

// errorDetail summarizes r's failures for the report, or returns "".
func (r *loadResult) errorDetail() string {
	if r.errors == 0 {
		return ""
	}
	var parts []string
	codes := make([]int, 0, len(r.statuses))
	for s := range r.statuses {
		codes = append(codes, s)
	}
	sort.Ints(codes)
	for _, s := range codes {
		parts = append(parts, fmt.Sprintf("%d x%d", s, r.statuses[s]))
	}
	if r.missing > 0 {
		parts = append(parts, fmt.Sprintf("body check x%d", r.missing))
	}
	parts = append(parts, "first: "+r.firstErr)
	return strings.Join(parts, "; ")
}

// send makes one request and reads the whole response into buf, so that
// the latency covers the last byte (for a stream, its final event).
func send(ctx context.Context, client *http.Client, t target, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
	if err != nil {
		return 0, err
	}
	// The header map is only read by the transport, so one map serves
	// every request of the target instead of a copy per request.
	req.Header = t.header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return resp.StatusCode, fmt.Errorf("reading body: %w", err)
	}
	return resp.StatusCode, nil
}

// probe sends t's request once and returns the status and the body, so
// that a misconfigured target fails before any load is measured.
func probe(ctx context.Context, client *http.Client, t target) (int, []byte, error) {
	var buf bytes.Buffer
	status, err := send(ctx, client, t, &buf)
	return status, buf.Bytes(), err
}

// drain reads and closes a response body so that its connection can be
// reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// snippet shortens a body for an error message.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
