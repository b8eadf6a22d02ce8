package caddymodule

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
)

// Traces. With Caddy's `tracing` handler in front of the gateway, each
// call is a span, child of the request's server span, with the GenAI
// semantic conventions' attributes (gen_ai.*, semconv v1.41), and each
// upstream attempt is a client span under it, so a fallback shows as
// attempts side by side. The attempt's trace context goes upstream in a
// traceparent header. Without a recording span in the request's context
// (no tracing handler, or a trace not sampled) nothing is made.

// tracerName is the instrumentation scope of the gateway's spans.
const tracerName = "github.com/modelgate/gateway/caddymodule"

// GenAI attribute keys, as in the OpenTelemetry semantic conventions.
const (
	attrOperationName    = attribute.Key("gen_ai.operation.name")
	attrProviderName     = attribute.Key("gen_ai.provider.name")
	attrSystem           = attribute.Key("gen_ai.system") // the provider's former key, for older back ends
	attrRequestModel     = attribute.Key("gen_ai.request.model")
	attrRequestMaxTokens = attribute.Key("gen_ai.request.max_tokens")
	attrRequestStream    = attribute.Key("gen_ai.request.stream")
	attrResponseID       = attribute.Key("gen_ai.response.id")
	attrResponseModel    = attribute.Key("gen_ai.response.model")
	attrFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	attrInputTokens      = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens     = attribute.Key("gen_ai.usage.output_tokens")
	attrCacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	attrCacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	attrErrorType        = attribute.Key("error.type")
	attrServerAddress    = attribute.Key("server.address")
	attrHTTPStatus       = attribute.Key("http.response.status_code")
)

// The gateway's own attribute keys.
const (
	attrEndpoint     = attribute.Key("llm_gateway.endpoint")
	attrTier         = attribute.Key("llm_gateway.tier")
	attrOutcome      = attribute.Key("llm_gateway.outcome")
	attrCost         = attribute.Key("llm_gateway.cost_usd")
	attrUpstreamCost = attribute.Key("llm_gateway.upstream_cost_usd")
	attrFallbacks    = attribute.Key("llm_gateway.fallbacks")
	attrServedModel  = attribute.Key("llm_gateway.served_model")
	attrCache        = attribute.Key("llm_gateway.cache")
	attrAttempt      = attribute.Key("llm_gateway.attempt")
)

// startSpan starts the call's span under the request's, and returns the
// request carrying it; without a recording span in r's context it returns
// r as it is.
func (c *call) startSpan(r *http.Request) *http.Request {
	parent := trace.SpanFromContext(r.Context())
	if !parent.IsRecording() {
		return r
	}
	c.tracer = parent.TracerProvider().Tracer(tracerName)
	attrs := []attribute.KeyValue{
		attrOperationName.String(operationNames[c.d]),
		attrRequestModel.String(c.req.Model),
		attrRequestStream.Bool(c.req.Stream),
		attrResponseID.String(c.id),
		attrEndpoint.String(endpointNames[c.d]),
		attrTier.String(c.route.Tier),
	}
	if c.maxTokens > 0 {
		attrs = append(attrs, attrRequestMaxTokens.Int64(c.maxTokens))
	}
	ctx, span := c.tracer.Start(r.Context(), operationNames[c.d]+" "+c.req.Model,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	c.span = span
	return r.WithContext(ctx)
}

// endSpan ends the call's span, if it has one.
func (c *call) endSpan() {
	if c.span != nil {
		c.span.End()
		c.span = nil
	}
}

// traceRecord puts the call's outcome on its span: the provider and model
// that served it, the usage by class, the finish reason, the cost and the
// fallbacks.
func (c *call) traceRecord(rec *reliability.Call, o outcome) {
	if c.span == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attrOutcome.String(o.String()),
		attrTier.String(rec.Tier),
		attrFallbacks.Int(max(len(rec.Attempts)-1, 0)),
	}
	if rec.Provider != "" {
		attrs = append(attrs,
			attrProviderName.String(rec.Provider), attrSystem.String(rec.Provider),
			attrResponseModel.String(rec.ModelVersion), attrServedModel.String(c.servedModelID(rec.Provider)),
			attrInputTokens.Int(rec.PromptTokens), attrOutputTokens.Int(rec.CompletionTokens))
		if rec.CacheReadTokens > 0 {
			attrs = append(attrs, attrCacheReadTokens.Int(rec.CacheReadTokens))
		}
		if w := rec.CacheWriteTokens + rec.CacheWrite1hTokens; w > 0 {
			attrs = append(attrs, attrCacheWriteTokens.Int(w))
		}
	}
	if c.finishReason != "" {
		attrs = append(attrs, attrFinishReasons.StringSlice([]string{c.finishReason}))
	}
	if rec.CostUSD != nil {
		attrs = append(attrs, attrCost.Float64(*rec.CostUSD))
	}
	if rec.UpstreamCostUSD != nil {
		attrs = append(attrs, attrUpstreamCost.Float64(*rec.UpstreamCostUSD))
	}
	if rec.Cache != "" {
		attrs = append(attrs, attrCache.String(rec.Cache))
	}
	if rec.Status != reliability.CallSucceeded {
		attrs = append(attrs, attrErrorType.String(o.String()))
		c.span.SetStatus(codes.Error, rec.Error)
	}
	c.span.SetAttributes(attrs...)
}

// startAttempt starts the span of one upstream attempt under the call's,
// and returns the request carrying it; without a call span it returns r
// and a nil span.
func (c *call) startAttempt(r *http.Request, cand routing.Candidate, up *upstream) (*http.Request, trace.Span) {
	if c.span == nil {
		return r, nil
	}
	ctx, span := c.tracer.Start(r.Context(), operationNames[c.d]+" "+cand.Path.UpstreamModel,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attrOperationName.String(operationNames[c.d]),
			attrProviderName.String(cand.Provider.Name),
			attrSystem.String(cand.Provider.Name),
			attrRequestModel.String(cand.Path.UpstreamModel),
			attrServerAddress.String(up.host),
			attrAttempt.Int(len(c.attempts)+1),
		))
	return r.WithContext(ctx), span
}

// endAttempt ends an attempt's span with its status and error type.
func endAttempt(span trace.Span, status int, errorType string) {
	if span == nil {
		return
	}
	if status > 0 {
		span.SetAttributes(attrHTTPStatus.Int(status))
	}
	if errorType != "" {
		span.SetAttributes(attrErrorType.String(errorType))
		span.SetStatus(codes.Error, "upstream attempt failed: "+errorType)
	}
	span.End()
}

// injectTraceContext gives the upstream request the attempt's trace
// context (W3C traceparent), when it has one.
func injectTraceContext(req *http.Request) {
	if sc := trace.SpanContextFromContext(req.Context()); sc.IsValid() {
		propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
}
