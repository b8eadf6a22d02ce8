package caddymodule

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// The gateway's Prometheus metrics. The collectors are made once per
// package and registered on each config's registry (registerMetrics, from
// App.Provision), so Caddy serves them wherever it serves metrics (the
// admin API's /metrics, the `metrics` handler) and a reload keeps their
// values. Names follow the OpenTelemetry GenAI semantic conventions in
// Prometheus form where one exists (gen_ai.server.request.duration ->
// gen_ai_server_request_duration_seconds), and so do their labels
// (gen_ai.request.model -> gen_ai_request_model); the rest are
// llm_gateway_*. Every label value comes from a bounded set: the catalog's
// model, router and provider names, the tiers, the endpoints, fixed
// outcome and cause names, HTTP status codes, operation keys (capped, see
// opLabels); never an id, a key or text from a request.
//
// The call path observes from what it already has (the call's record, its
// usage by class, its attempts) through children cached per label
// combination, so a call costs a map lookup and a few atomic adds, with no
// allocation.

// Label names shared by the call metrics, in the order of callLabels.
const (
	labelEndpoint      = "endpoint"
	labelDialect       = "dialect"
	labelOperation     = "gen_ai_operation_name"
	labelRequestModel  = "gen_ai_request_model"
	labelResponseModel = "gen_ai_response_model"
	labelProvider      = "gen_ai_provider_name"
	labelTier          = "tier"
	labelOutcome       = "outcome"
	labelTokenType     = "gen_ai_token_type"
	labelErrorType     = "error_type"
)

// callLabels label every per-call metric: the client's endpoint and
// dialect, the GenAI operation, the model asked for, the catalog model
// that served the call, its provider and the tier it was served at.
var callLabels = []string{labelEndpoint, labelDialect, labelOperation, labelRequestModel, labelResponseModel, labelProvider, labelTier}

// noneLabel stands for a provider or served model when no path served.
const noneLabel = "none"

// Buckets, after the GenAI semantic conventions' advice where it has some.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	ttftBuckets     = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	tpotBuckets     = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	commitBuckets   = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
	batchBuckets    = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	scoreBuckets    = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1}
)

// outcome is how a call ended, a label value of the call metrics.
type outcome uint8

const (
	// outcomeSuccess: served.
	outcomeSuccess outcome = iota
	// outcomeCacheHit: answered from the response cache.
	outcomeCacheHit
	// outcomeUpstreamError: every path failed (5xx, 429, timeouts, ...).
	outcomeUpstreamError
	// outcomeUnsupported: no path could take the request as it is.
	outcomeUnsupported
	// outcomeUpstreamRejected: an upstream refused the request itself (4xx).
	outcomeUpstreamRejected
	// outcomeStreamError: a stream broke after the client had bytes.
	outcomeStreamError
	// outcomeClientClosed: the client left mid-stream.
	outcomeClientClosed
	// outcomeInvalidResponse: the upstream's answer could not be passed on.
	outcomeInvalidResponse
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"success", "cache_hit", "upstream_error", "unsupported", "upstream_rejected", "stream_error", "client_closed", "invalid_response"}

func (o outcome) String() string { return outcomeNames[o] }

// msgClientClosed is the record's error of a stream the client left.
const msgClientClosed = "the client closed the connection"

// outcomeOf classifies a call's record.
func outcomeOf(rec *reliability.Call) outcome {
	if rec.Status == reliability.CallSucceeded {
		if rec.Cache == "hit" {
			return outcomeCacheHit
		}
		return outcomeSuccess
	}
	var last reliability.Attempt
	if n := len(rec.Attempts); n > 0 {
		last = rec.Attempts[n-1]
	}
	switch {
	case rec.Provider == "" && strings.HasPrefix(last.Error, attemptUntranslatable):
		return outcomeUnsupported
	case rec.Provider == "":
		return outcomeUpstreamError
	case last.Status >= 400 && last.Status < 500:
		return outcomeUpstreamRejected
	case rec.Stream && rec.Error == msgClientClosed:
		return outcomeClientClosed
	case rec.Stream:
		return outcomeStreamError
	}
	return outcomeInvalidResponse
}

// Prefixes of the attempt errors the gateway writes itself for paths it
// did not send to; fallbackCause reads them back.
const (
	attemptSkipped        = "skipped:"
	attemptUntranslatable = "request translation:"
	attemptQueue          = "waiting for the upstream:"
)

// tokenType indexes the token classes of gen_ai_client_token_usage.
type tokenType uint8

const (
	tokenInput tokenType = iota
	tokenOutput
	tokenCacheRead
	tokenCacheWrite
	numTokenTypes
)

// tokenTypeNames extend the GenAI token types (input, output) with the
// prompt-cache classes, which input counts too.
var tokenTypeNames = [numTokenTypes]string{"input", "output", "cache_read", "cache_write"}

// gatewayMetrics are the package's collectors.
type gatewayMetrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	ttft         *prometheus.HistogramVec
	tpot         *prometheus.HistogramVec
	tokens       *prometheus.HistogramVec
	billed       *prometheus.CounterVec
	upstreamCost *prometheus.CounterVec

	attemptDuration *prometheus.HistogramVec
	upstreamErrors  *prometheus.CounterVec
	fallbacks       *prometheus.CounterVec

	cacheLookups *prometheus.CounterVec
	rejections   *prometheus.CounterVec
	refunds      *prometheus.CounterVec
	refundedUSD  *prometheus.CounterVec
	evalScores   *prometheus.HistogramVec
	evalGates    *prometheus.CounterVec
	evalCalls    *prometheus.CounterVec

	commitDuration prometheus.Histogram
	commitCalls    prometheus.Histogram
	commitErrors   prometheus.Counter
	state          *stateCollector

	// calls, attempts and lookups cache the children of each label
	// combination seen, keyed by callKey, attemptKey and lookupKey.
	calls, attempts, lookups, fallbackSeries sync.Map
	// opLabels bounds the operation label of the eval-pass metrics.
	opLabels boundedLabels
}

// mx is the package's one set of collectors.
var mx = newGatewayMetrics()

func newGatewayMetrics() *gatewayMetrics {
	withOutcome := append(append([]string(nil), callLabels...), labelOutcome)
	withTokenType := append(append([]string(nil), callLabels...), labelTokenType)
	return &gatewayMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_requests_total",
			Help: "Model calls, by endpoint, client dialect, requested and serving model, provider, tier and outcome.",
		}, withOutcome),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_request_duration_seconds",
			Help:    "Time from a call's arrival to the end of its answer (GenAI gen_ai.server.request.duration).",
			Buckets: durationBuckets,
		}, withOutcome),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_time_to_first_token_seconds",
			Help:    "Time from a streamed call's arrival to its first bytes to the client (GenAI gen_ai.server.time_to_first_token).",
			Buckets: ttftBuckets,
		}, callLabels),
		tpot: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_time_per_output_token_seconds",
			Help:    "Inter-token time of streamed calls: time after the first bytes per output token after the first (GenAI gen_ai.server.time_per_output_token).",
			Buckets: tpotBuckets,
		}, callLabels),
		tokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_client_token_usage",
			Help:    "Tokens per call as the upstream reported them (GenAI gen_ai.client.token.usage); input counts every input token, cache_read and cache_write the prompt-cache classes within it. The _sum is the total.",
			Buckets: tokenBuckets,
		}, withTokenType),
		billed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_billed_usd_total",
			Help: "What calls were billed, in USD, before refunds.",
		}, callLabels),
		upstreamCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_upstream_cost_usd_total",
			Help: "What the upstreams charge for the calls, in USD, at the catalog's path prices.",
		}, callLabels),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_client_operation_duration_seconds",
			Help:    "Duration of each upstream attempt (GenAI gen_ai.client.operation.duration); error_type is empty on success.",
			Buckets: durationBuckets,
		}, []string{labelProvider, labelRequestModel, labelErrorType}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_upstream_errors_total",
			Help: "Failed upstream attempts, by provider and status: the HTTP status, or timeout, connect_error, aborted.",
		}, []string{labelProvider, "status"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_fallbacks_total",
			Help: "Paths a call moved past to the next one, by the requested model, the provider left and why.",
		}, []string{labelRequestModel, labelProvider, "cause"}),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_response_cache_lookups_total",
			Help: "Response cache lookups, by requested model and result (hit, miss).",
		}, []string{labelRequestModel, "result"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_rejections_total",
			Help: "Calls refused before any upstream call: rate_limit_exceeded, insufficient_quota, budget_exceeded.",
		}, []string{"reason"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_refunds_total",
			Help: "Refund requests, by kind (thumbs_down, eval_gate, operator) and outcome (credited, capped, already_refunded, not_charged, gate_unreliable).",
		}, []string{"kind", "status"}),
		refundedUSD: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_refunded_usd_total",
			Help: "USD credited back by refunds, by kind.",
		}, []string{"kind"}),
		evalScores: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llm_gateway_eval_pass_score",
			Help:    "Ship-gate scores the async eval pass gave served calls, by operation key.",
			Buckets: scoreBuckets,
		}, []string{"operation"}),
		evalGates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_eval_pass_gates_total",
			Help: "Ship-gate verdicts of the async eval pass, by operation key and result (pass, fail).",
		}, []string{"operation", "result"}),
		evalCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_eval_pass_calls_total",
			Help: "Calls scored by the async eval pass, by operation key and result: pass when every gate passed.",
		}, []string{"operation", "result"}),
		commitDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "llm_gateway_store_commit_duration_seconds",
			Help:    "Duration of each group commit of call records.",
			Buckets: commitBuckets,
		}),
		commitCalls: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "llm_gateway_store_commit_calls",
			Help:    "Call records per group commit.",
			Buckets: batchBuckets,
		}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "llm_gateway_store_commit_errors_total",
			Help: "Group commits of call records that failed.",
		}),
		state:    newStateCollector(),
		opLabels: boundedLabels{max: maxOperationLabels},
	}
}

// collectors lists every collector, for registration.
func (m *gatewayMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.requests, m.duration, m.ttft, m.tpot, m.tokens, m.billed, m.upstreamCost,
		m.attemptDuration, m.upstreamErrors, m.fallbacks, m.cacheLookups, m.rejections,
		m.refunds, m.refundedUSD, m.evalScores, m.evalGates, m.evalCalls,
		m.commitDuration, m.commitCalls, m.commitErrors, m.state,
	}
}

// registerMetrics registers the collectors on a config's registry; a
// registry that has them already (another module of the config registered
// them) is left as it is.
func registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for _, c := range mx.collectors() {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// callKey is one combination of the call metrics' labels.
type callKey struct {
	d                             translate.Dialect
	outcome                       outcome
	stream                        bool
	model, served, provider, tier string
}

// callSeries are the children of one callKey. Those a combination never
// observes are nil, and the prompt-cache token classes are made on their
// first use, so that /metrics shows no empty series.
type callSeries struct {
	base         []string
	requests     prometheus.Counter
	duration     prometheus.Observer
	ttft, tpot   prometheus.Observer
	tokens       [numTokenTypes]atomic.Pointer[observerRef]
	billed, cost prometheus.Counter
}

// observerRef holds an Observer for an atomic.Pointer.
type observerRef struct{ prometheus.Observer }

// token is the token usage child of class t, made on first use.
func (s *callSeries) token(t tokenType) prometheus.Observer {
	if r := s.tokens[t].Load(); r != nil {
		return r.Observer
	}
	labels := append(append(make([]string, 0, len(s.base)+1), s.base...), tokenTypeNames[t])
	s.tokens[t].CompareAndSwap(nil, &observerRef{mx.tokens.WithLabelValues(labels...)})
	return s.tokens[t].Load().Observer
}

// dialectNames name each endpoint's client dialect; operationNames its
// GenAI operation.
var (
	dialectNames   = [...]string{translate.Chat: "openai", translate.Messages: "anthropic", translate.Responses: "openai", translate.Embeddings: "openai"}
	operationNames = [...]string{translate.Chat: "chat", translate.Messages: "chat", translate.Responses: "chat", translate.Embeddings: "embeddings"}
)

func (m *gatewayMetrics) callSeries(k callKey) *callSeries {
	if s, ok := m.calls.Load(k); ok {
		return s.(*callSeries)
	}
	base := []string{endpointNames[k.d], dialectNames[k.d], operationNames[k.d], k.model, k.served, k.provider, k.tier}
	with := func(v string) []string { return append(append(make([]string, 0, len(base)+1), base...), v) }
	s := &callSeries{
		base:     base,
		requests: m.requests.WithLabelValues(with(k.outcome.String())...),
		duration: m.duration.WithLabelValues(with(k.outcome.String())...),
	}
	// A call that reached an upstream has usage and a bill; a cache hit
	// or a call no path served has neither.
	if k.provider != noneLabel && k.outcome != outcomeCacheHit {
		s.token(tokenInput)
		s.token(tokenOutput)
		s.billed = m.billed.WithLabelValues(base...)
		s.cost = m.upstreamCost.WithLabelValues(base...)
	}
	if k.stream && k.outcome == outcomeSuccess {
		s.ttft = m.ttft.WithLabelValues(base...)
		s.tpot = m.tpot.WithLabelValues(base...)
	}
	actual, _ := m.calls.LoadOrStore(k, s)
	return actual.(*callSeries)
}

// callObs is what a call keeps for its metrics, its span and its log
// fields, beside what the call path keeps anyway.
type callObs struct {
	// served is the candidate the call's last record was made for.
	served routing.Candidate
	// firstByte is when a stream's first bytes went to the client.
	firstByte time.Time
	// finishReason is the answer's, in the chat vocabulary.
	finishReason string
	// span is the call's span and tracer its tracer, when it is traced.
	span   trace.Span
	tracer trace.Tracer
	// logged is what the access log fields read.
	logged logged
}

// observe hands a call's record to the metrics, the call's span and its
// log fields.
func (c *call) observe(rec *reliability.Call) {
	o := outcomeOf(rec)
	c.observeCall(rec, o, time.Now())
	c.traceRecord(rec, o)
	c.keepLogged(rec, o)
}

// attemptDone counts an upstream attempt sent at t0 and ends its span.
func (c *call) attemptDone(span trace.Span, cand routing.Candidate, t0 time.Time, aw *attemptWriter, err error) {
	et := attemptErrorType(aw, err)
	observeAttempt(cand.Provider.Name, cand.Path.UpstreamModel, t0, et)
	endAttempt(span, aw.status, et)
}

// observeCall counts a recorded call: every call outcome passes through
// (*call).record, which calls it before the record goes to the store.
func (c *call) observeCall(rec *reliability.Call, o outcome, end time.Time) {
	served, provider := noneLabel, noneLabel
	if rec.Provider != "" {
		provider = rec.Provider
		served = c.servedModelID(rec.Provider)
	}
	s := mx.callSeries(callKey{d: c.d, outcome: o, stream: c.req.Stream, model: c.req.Model, served: served, provider: provider, tier: c.route.Tier})
	s.requests.Inc()
	s.duration.Observe(end.Sub(c.start).Seconds())
	if s.ttft != nil && !c.firstByte.IsZero() {
		s.ttft.Observe(c.firstByte.Sub(c.start).Seconds())
		if rec.CompletionTokens > 1 {
			s.tpot.Observe(end.Sub(c.firstByte).Seconds() / float64(rec.CompletionTokens-1))
		}
	}
	if s.billed != nil {
		s.token(tokenInput).Observe(float64(rec.PromptTokens))
		s.token(tokenOutput).Observe(float64(rec.CompletionTokens))
		if rec.CacheReadTokens > 0 {
			s.token(tokenCacheRead).Observe(float64(rec.CacheReadTokens))
		}
		if w := rec.CacheWriteTokens + rec.CacheWrite1hTokens; w > 0 {
			s.token(tokenCacheWrite).Observe(float64(w))
		}
		if rec.CostUSD != nil && *rec.CostUSD > 0 {
			s.billed.Add(*rec.CostUSD)
		}
		if rec.UpstreamCostUSD != nil && *rec.UpstreamCostUSD > 0 {
			s.cost.Add(*rec.UpstreamCostUSD)
		}
	}
	// Every attempt but the last left its path for the next one.
	for i := 0; i < len(rec.Attempts)-1; i++ {
		a := &rec.Attempts[i]
		mx.fallback(c.req.Model, a.Provider, fallbackCause(a))
	}
}

// servedModelID is the catalog model of the path that served the call:
// the candidate the record was made for, or else (a cache hit) the
// route's first candidate of the provider.
func (c *call) servedModelID(provider string) string {
	if c.served.Model != nil && c.served.Provider != nil && c.served.Provider.Name == provider {
		return c.served.Model.ID
	}
	for _, cand := range c.route.Candidates {
		if cand.Provider != nil && cand.Provider.Name == provider && cand.Model != nil {
			return cand.Model.ID
		}
	}
	if c.route.Model != nil {
		return c.route.Model.ID
	}
	return noneLabel
}

// fallbackKey is one combination of the fallback counter's labels.
type fallbackKey struct{ model, provider, cause string }

func (m *gatewayMetrics) fallback(model, provider, cause string) {
	k := fallbackKey{model, provider, cause}
	s, ok := m.fallbackSeries.Load(k)
	if !ok {
		s, _ = m.fallbackSeries.LoadOrStore(k, m.fallbacks.WithLabelValues(model, provider, cause))
	}
	s.(prometheus.Counter).Inc()
}

// fallbackCause names why an attempt's path was left.
func fallbackCause(a *reliability.Attempt) string {
	switch s := a.Status; {
	case s == 0:
		switch {
		case strings.HasPrefix(a.Error, attemptSkipped):
			return "cooling_down"
		case strings.HasPrefix(a.Error, attemptUntranslatable):
			return "untranslatable"
		case strings.HasPrefix(a.Error, attemptQueue):
			return "queue_timeout"
		case strings.Contains(a.Error, "timeout") || strings.Contains(a.Error, "in time"):
			return "timeout"
		}
		return "connect_error"
	case s == 429:
		return "rate_limited"
	case s == 408:
		return "timeout"
	case s == 401 || s == 403:
		return "auth"
	case s == 404:
		return "not_found"
	case s >= 500:
		return "server_error"
	}
	return "rejected"
}

// attemptKey is one combination of the attempt metrics' labels.
type attemptKey struct {
	provider, model string
	errorType       string
}

// attemptSeries are the children of one attemptKey; errors is nil on
// success.
type attemptSeries struct {
	duration prometheus.Observer
	errors   prometheus.Counter
}

// statusLabels are the HTTP status codes as label values, made once.
var statusLabels = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// attemptErrorType classifies a finished attempt for error_type and the
// upstream error count: "" when the upstream gave an answer the gateway
// could use (or the client left mid-stream, which is no fault of the
// upstream's), else the failing HTTP status, or what went wrong without
// one: timeout, connect_error, invalid_stream, aborted.
func attemptErrorType(aw *attemptWriter, err error) string {
	switch {
	case aw.mode == modeCapture || aw.status >= 400:
		if aw.status > 0 && aw.status < len(statusLabels) {
			return statusLabels[aw.status]
		}
		return "invalid_status"
	case aw.sinkErr != nil:
		var defect *streamDefect
		if errors.As(aw.sinkErr, &defect) {
			return "invalid_stream"
		}
		return ""
	case err == nil:
		return ""
	case isTimeout(err):
		return "timeout"
	case aw.status == 0 && !errors.Is(err, errAborted):
		return "connect_error"
	}
	return "aborted"
}

// observeAttempt counts one upstream attempt, sent at t0, that ended with
// errorType.
func observeAttempt(provider, model string, t0 time.Time, errorType string) {
	k := attemptKey{provider: provider, model: model, errorType: errorType}
	v, ok := mx.attempts.Load(k)
	if !ok {
		s := &attemptSeries{duration: mx.attemptDuration.WithLabelValues(provider, model, errorType)}
		if errorType != "" {
			s.errors = mx.upstreamErrors.WithLabelValues(provider, errorType)
		}
		v, _ = mx.attempts.LoadOrStore(k, s)
	}
	s := v.(*attemptSeries)
	s.duration.Observe(time.Since(t0).Seconds())
	if s.errors != nil {
		s.errors.Inc()
	}
}

// lookupKey is one combination of the cache lookup counter's labels.
type lookupKey struct {
	model string
	hit   bool
}

// observeCacheLookup counts a response cache lookup.
func observeCacheLookup(model string, hit bool) {
	k := lookupKey{model, hit}
	v, ok := mx.lookups.Load(k)
	if !ok {
		result := "miss"
		if hit {
			result = "hit"
		}
		v, _ = mx.lookups.LoadOrStore(k, mx.cacheLookups.WithLabelValues(model, result))
	}
	v.(prometheus.Counter).Inc()
}

// observeRejection counts a call refused before any upstream call, by
// its error code.
func observeRejection(code string) {
	mx.rejections.WithLabelValues(code).Inc()
}

// observeRefund counts a refund request's outcome (BoltOptions.OnRefund).
func observeRefund(e reliability.RefundEvent) {
	kind := e.Reason
	if kind != reliability.RefundReasonThumbsDown && kind != reliability.RefundReasonEvalGate {
		kind = "operator"
	}
	mx.refunds.WithLabelValues(kind, e.Status).Inc()
	if e.Status == reliability.RefundCredited && e.AmountUSD > 0 {
		mx.refundedUSD.WithLabelValues(kind).Add(e.AmountUSD)
	}
}

// observeCommit counts a group commit of call records
// (BoltOptions.OnCommit).
func observeCommit(calls int, took time.Duration, err error) {
	mx.commitDuration.Observe(took.Seconds())
	mx.commitCalls.Observe(float64(calls))
	if err != nil {
		mx.commitErrors.Inc()
	}
}

// observeGateScore counts one ship-gate score of the eval pass.
func observeGateScore(e reliability.GateEvidence) {
	op := mx.opLabels.value(e.OperationKey)
	mx.evalScores.WithLabelValues(op).Observe(e.Score)
	mx.evalGates.WithLabelValues(op, passFail(e.Passed)).Inc()
}

// observeScoredCall counts a call's overall eval-pass verdict.
func observeScoredCall(e reliability.GateEvidence) {
	mx.evalCalls.WithLabelValues(mx.opLabels.value(e.OperationKey), passFail(e.Passed)).Inc()
}

func passFail(passed bool) string {
	if passed {
		return "pass"
	}
	return "fail"
}

// maxOperationLabels is how many operation keys get a label value of
// their own; operations are created through the API, so the rest share
// otherLabel.
const maxOperationLabels = 100

// otherLabel stands for the values past a label's cap.
const otherLabel = "_other"

// boundedLabels admits the first max distinct values of a label and maps
// the rest to otherLabel: its set never grows past max.
type boundedLabels struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

func (b *boundedLabels) value(v string) string {
	if v == "" {
		return noneLabel
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return otherLabel
	}
	if b.seen == nil {
		b.seen = map[string]struct{}{}
	}
	b.seen[v] = struct{}{}
	return v
}
