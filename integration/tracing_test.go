package integration

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpCollector is an in-process OTLP/HTTP trace receiver: it keeps every
// span exported to it.
type otlpCollector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPCollector(t *testing.T) *otlpCollector {
	t.Helper()
	c := &otlpCollector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				c.spans = append(c.spans, ss.GetSpans()...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// named returns the spans received with this name.
func (c *otlpCollector) named(name string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// children returns the spans whose parent is parent, oldest first.
func (c *otlpCollector) children(parent *tracepb.Span) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if string(s.GetParentSpanId()) == string(parent.GetSpanId()) && string(s.GetTraceId()) == string(parent.GetTraceId()) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *tracepb.Span) int { return int(a.GetStartTimeUnixNano() - b.GetStartTimeUnixNano()) })
	return out
}

// attr finds a span attribute.
func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// TestTracesOfACallAndItsFallback: with Caddy's tracing handler in front,
// a call is a span under the request's with the GenAI attributes (provider,
// request and response model, usage, finish reason), and each upstream
// attempt a client span under the call's, so the fallback past a closed
// port and a 503 shows as three attempts, the first two failed. The
// attempt's trace context reaches the upstream, whose span joins the trace
// under the attempt's.
func TestTracesOfACallAndItsFallback(t *testing.T) {
	col := newOTLPCollector(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.URL+"/v1/traces")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	g := startObs(t, true)

	status, ans, _ := g.chatCall(demoKey, chatBody("demo/fallback-chat", "trace this call", ""), nil)
	if status != http.StatusOK {
		t.Fatalf("call: %d %s", status, ans.Raw)
	}
	var call *tracepb.Span
	var attempts []*tracepb.Span
	eventually(t, "the call's spans at the collector", func() error {
		calls := col.named("chat demo/fallback-chat")
		if len(calls) != 1 {
			return fmt.Errorf("%d call spans", len(calls))
		}
		call = calls[0]
		if attempts = col.children(call); len(attempts) != 3 {
			return fmt.Errorf("%d attempt spans under the call's", len(attempts))
		}
		return nil
	})

	parentFound := false
	for _, s := range col.named("gateway") {
		parentFound = parentFound || (string(s.GetSpanId()) == string(call.GetParentSpanId()) && s.GetKind() == tracepb.Span_SPAN_KIND_SERVER)
	}
	if !parentFound {
		t.Error("the call span's parent is not the tracing handler's server span")
	}
	if call.GetKind() != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("call span kind %v, want internal", call.GetKind())
	}
	for key, want := range map[string]string{
		"gen_ai.operation.name": "chat",
		"gen_ai.request.model":  "demo/fallback-chat",
		"gen_ai.provider.name":  "demo",
		"gen_ai.system":         "demo",
		"gen_ai.response.model": "demo-chat", // the upstream's model, as it named it
		"gen_ai.response.id":    ans.Get("id").String(),
		"llm_gateway.outcome":   "success",
	} {
		if got := attr(call, key).GetStringValue(); got != want {
			t.Errorf("call span %s = %q, want %q", key, got, want)
		}
	}
	for key, want := range map[string]int64{
		"gen_ai.usage.input_tokens":  ans.Get("usage.prompt_tokens").Int(),
		"gen_ai.usage.output_tokens": ans.Get("usage.completion_tokens").Int(),
		"llm_gateway.fallbacks":      2,
	} {
		if got := attr(call, key).GetIntValue(); got != want {
			t.Errorf("call span %s = %d, want %d", key, got, want)
		}
	}
	if fr := attr(call, "gen_ai.response.finish_reasons").GetArrayValue().GetValues(); len(fr) != 1 || fr[0].GetStringValue() != "stop" {
		t.Errorf("call span gen_ai.response.finish_reasons = %v, want [stop]", fr)
	}
	if got, want := attr(call, "llm_gateway.cost_usd").GetDoubleValue(), ans.Get("delivery.cost_usd").Float(); got != want {
		t.Errorf("call span llm_gateway.cost_usd = %v, want %v", got, want)
	}

	for i, want := range []struct {
		provider, errorType string
		failed              bool
	}{{"down", "connect_error", true}, {"broken", "503", true}, {"demo", "", false}} {
		a := attempts[i]
		if p := attr(a, "gen_ai.provider.name").GetStringValue(); p != want.provider {
			t.Errorf("attempt %d: provider %q, want %q", i, p, want.provider)
		}
		if a.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("attempt %d: kind %v, want client", i, a.GetKind())
		}
		if got := attr(a, "error.type").GetStringValue(); got != want.errorType {
			t.Errorf("attempt %d: error.type %q, want %q", i, got, want.errorType)
		}
		if failed := a.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR; failed != want.failed {
			t.Errorf("attempt %d: failed %v, want %v", i, failed, want.failed)
		}
	}
	if got := attr(attempts[2], "http.response.status_code").GetIntValue(); got != http.StatusOK {
		t.Errorf("the served attempt's http.response.status_code = %d, want 200", got)
	}
	eventually(t, "the upstream's span under the served attempt's", func() error {
		for _, s := range col.named("upstream") {
			if string(s.GetParentSpanId()) == string(attempts[2].GetSpanId()) && string(s.GetTraceId()) == string(call.GetTraceId()) {
				return nil
			}
		}
		return fmt.Errorf("no upstream span has the served attempt as parent")
	})
}
