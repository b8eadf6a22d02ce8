package caddymodule

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// batchPoll is how often the batch worker looks for queued calls when it
// was not woken; batchWorkers is how many queued calls run at once.
const (
	batchPoll    = 500 * time.Millisecond
	batchWorkers = 4
	// batchAttempts is how many times a batch call is tried while no
	// upstream can serve it (backing off from 1s to 1m) before it fails.
	batchAttempts = 8
)

// endpointDialects maps a record's endpoint back to its dialect.
var endpointDialects = map[string]translate.Dialect{
	"chat.completions": translate.Chat, "messages": translate.Messages, "responses": translate.Responses,
}

// enqueue accepts a batch-tier call: the queued record and its job commit
// before the answer, which carries delivery.eta_ms; the result lands on
// GET /calls/{id}.
func (c *call) enqueue(w http.ResponseWriter) {
	st := c.g.app.storeOrNil()
	cand := c.route.Candidates[0]
	eta := c.g.app.batchETA(st)
	dl := &delivery{
		tier: c.route.Tier, servedBy: cand.Path.ServedBy, provider: cand.Provider.Name, quantization: cand.Path.Quantization,
		etaMs: &eta, latencyMs: time.Since(c.start).Milliseconds(), gates: c.gates, scheduled: c.gates > 0, fps: c.fps,
	}
	rec := c.baseRecord(cand)
	rec.ResponsePayload = []byte("null")
	rec.Delivery = dl.json()
	err := st.EnqueueBatch(rec, reliability.BatchJob{KeyID: c.p.keyID, Endpoint: endpointNames[c.d], Body: c.body, EnqueuedAt: c.start})
	if err != nil {
		c.g.logger.Error("queueing a batch call", zap.Error(err))
		writeError(w, errInternal("could not queue the call"), c.d == translate.Messages)
		return
	}
	c.g.app.wakeBatch()
	writeJSON(w, http.StatusOK, appendAccepted(nil, c.d, c.id, c.req.Model, c.start.Unix(), dl.json()))
}

// appendAccepted is the immediate answer to a queued call in the client's
// shape: no output yet, and a delivery block with the estimate.
func appendAccepted(b []byte, d translate.Dialect, id, model string, created int64, delivery []byte) []byte {
	switch d {
	case translate.Messages:
		b = append(b, `{"id":`...)
		b = translate.AppendJSONString(b, id)
		b = append(b, `,"type":"message","role":"assistant","model":`...)
		b = translate.AppendJSONString(b, model)
		b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}`...)
	case translate.Responses:
		b = append(b, `{"id":`...)
		b = translate.AppendJSONString(b, id)
		b = append(b, `,"object":"response","created_at":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"status":"in_progress","error":null,"incomplete_details":null,"model":`...)
		b = translate.AppendJSONString(b, model)
		b = append(b, `,"output":[],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`...)
	default:
		b = append(b, `{"id":`...)
		b = translate.AppendJSONString(b, id)
		b = append(b, `,"object":"chat.completion","created":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"model":`...)
		b = translate.AppendJSONString(b, model)
		b = append(b, `,"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`...)
	}
	b = append(b, `,"delivery":`...)
	b = append(b, delivery...)
	return append(b, '}')
}

// batchState is the batch worker of one config.
type batchState struct {
	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// avgMs is a moving average of how long a batch call takes.
	mu    sync.Mutex
	avgMs float64
}

// batchETA estimates when a call queued now will have its result: the
// calls ahead of it, at the recent pace, across the workers.
func (a *App) batchETA(st *reliability.BoltStore) int64 {
	b := a.rt.batch
	b.mu.Lock()
	avg := b.avgMs
	b.mu.Unlock()
	if avg == 0 {
		avg = 1000
	}
	ahead := st.BatchQueueLen()
	return int64(float64(ahead/batchWorkers+1)*avg) + batchPoll.Milliseconds()
}

func (a *App) wakeBatch() {
	select {
	case a.rt.batch.wake <- struct{}{}:
	default:
	}
}

// startBatch starts the worker that runs queued calls; it picks up calls
// a previous process left in the queue.
func (a *App) startBatch(st *reliability.BoltStore) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &batchState{wake: make(chan struct{}, 1), cancel: cancel}
	a.rt.batch = b
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		sem := make(chan struct{}, batchWorkers)
		t := time.NewTicker(batchPoll)
		defer t.Stop()
		for {
			jobs, err := st.ClaimBatch(batchWorkers)
			if err != nil {
				a.logger.Error("reading the batch queue", zap.Error(err))
			}
			for _, j := range jobs {
				sem <- struct{}{}
				b.wg.Add(1)
				go func(j reliability.BatchJob) {
					defer func() { <-sem; b.wg.Done() }()
					a.runBatch(ctx, st, j)
				}(j)
			}
			select {
			case <-ctx.Done():
				return
			case <-b.wake:
			case <-t.C:
			}
		}
	}()
}

// stopBatch stops the worker; calls cut short stay queued for the next run.
func (a *App) stopBatch() {
	if b := a.rt.batch; b != nil {
		b.cancel()
		b.wg.Wait()
	}
}

// runBatch runs one queued call through the call path, under its queued
// id, at the batch tier; its record replaces the queued one.
func (a *App) runBatch(ctx context.Context, st *reliability.BoltStore, j reliability.BatchJob) {
	g := a.models.gateway.Load()
	d, ok := endpointDialects[j.Endpoint]
	if g == nil || !ok {
		st.ReleaseBatch(j.CallID)
		return
	}
	org, err := st.Org(j.OrgID)
	if err != nil {
		a.logger.Error("batch call of an unknown org", zap.String("call", j.CallID), zap.Error(err))
		_ = st.DoneBatch(j.CallID)
		return
	}
	p := a.principalFor(org, j.KeyID)
	r, err := internalRequest(ctx, g.Prefix+d.Path(), j.Body)
	if err != nil {
		st.ReleaseBatch(j.CallID)
		return
	}
	t0 := time.Now()
	w := &bufferWriter{header: make(http.Header)}
	c, aerr := g.newCall(r, p, d, j.Body, j.EnqueuedAt)
	if aerr != nil {
		// The catalog changed since the call was queued, or credit ran
		// out: the call ends failed, with the reason on its record.
		rec := &reliability.Call{ID: j.CallID, Object: "call", OrgID: org.ID, Model: "", RequestPayload: j.Body,
			ResponsePayload: []byte("null"), CreatedAt: j.EnqueuedAt.UTC(), Status: reliability.CallFailed, Error: aerr.message,
			Endpoint: j.Endpoint, Tier: "batch"}
		st.RecordCall(rec)
		_ = st.Sync()
		_ = st.DoneBatch(j.CallID)
		return
	}
	c.id, c.batchRun = j.CallID, true
	defer c.reservation.Release()
	// A batch call promises a result, not an answer now: when no upstream
	// can serve it (refused, 5xx, 429), it waits and tries again.
	for attempt := 1; ; attempt++ {
		c.serve(w, r)
		if !c.unserved || ctx.Err() != nil {
			break
		}
		if attempt == batchAttempts {
			c.unserved = false
			rec := c.failedRecord(routing.Candidate{}, "no upstream path could serve the call after "+strconv.Itoa(attempt)+" tries: "+c.lastError)
			c.record(rec)
			break
		}
		delay := min(time.Second<<(attempt-1), time.Minute)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		if ctx.Err() != nil {
			break
		}
		c.attempts = c.attempts[:0]
		c.unserved = false
	}
	if ctx.Err() != nil {
		// Stopped mid-call: run it again after the restart.
		st.ReleaseBatch(j.CallID)
		return
	}
	_ = st.Sync()
	_ = st.DoneBatch(j.CallID)
	ms := float64(time.Since(t0).Milliseconds())
	a.rt.batch.mu.Lock()
	if a.rt.batch.avgMs == 0 {
		a.rt.batch.avgMs = ms
	} else {
		a.rt.batch.avgMs = 0.8*a.rt.batch.avgMs + 0.2*ms
	}
	a.rt.batch.mu.Unlock()
}

// internalRequest builds a request for the call path that did not come
// through a listener: the context carries what Caddy's server would set.
func internalRequest(ctx context.Context, path string, body []byte) (*http.Request, error) {
	ctx = context.WithValue(ctx, caddy.ReplacerCtxKey, caddy.NewReplacer())
	// Caddy's vars table (its API fixes the map type): the proxy reads the
	// client IP and trusted-proxy vars the server would have set.
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "127.0.0.1", caddyhttp.TrustedProxyVarKey: false})
	ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, internalServer)
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytesReader(body))
	if err != nil {
		return nil, err
	}
	r.RemoteAddr = "127.0.0.1:0"
	return r, nil
}
