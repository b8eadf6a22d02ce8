package caddymodule

import (
	"time"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// baseRecord is what every record of the call holds. Only the client's body
// is kept: credentials travel in headers, which are never recorded. The
// payloads are valid JSON: the body passed validation, and every response
// payload and delivery block is checked or written by the gateway.
func (c *call) baseRecord(cand routing.Candidate) *reliability.Call {
	rec := &reliability.Call{
		ID:              c.id,
		Object:          "call",
		OrgID:           c.p.orgID,
		KeyID:           c.p.keyID,
		OperationID:     c.opID,
		Model:           c.req.Model,
		RequestPayload:  c.body,
		CreatedAt:       c.start.UTC(),
		Endpoint:        endpointNames[c.d],
		Tier:            c.route.Tier,
		Stream:          c.req.Stream,
		Attempts:        c.attempts,
		PayloadsChecked: true,
	}
	c.served = cand // the metrics name the model that served the call
	if cand.Provider != nil {
		rec.Provider = cand.Provider.Name
		rec.ModelVersion = cand.Path.UpstreamModel
		rec.PathKey = routing.PathKey(cand)
	}
	return rec
}

// successRecord records a served call.
func (c *call) successRecord(cand routing.Candidate, usage translate.Usage, dl *delivery, response []byte, version string) *reliability.Call {
	rec := c.baseRecord(cand)
	rec.Status = "succeeded"
	if version != "" {
		rec.ModelVersion = version
	}
	rec.ResponsePayload = response
	setUsage(rec, usage)
	c.g.app.chargeTokens(c.p, usage.InputTokens+usage.OutputTokens)
	rec.LatencyMs = dl.latencyMs
	rec.CostUSD = dl.cost
	rec.UpstreamCostUSD = dl.upstreamCost
	if dl.cost != nil && *dl.cost > 0 {
		rec.ChargeUSD = *dl.cost
	}
	rec.Delivery = dl.json()
	return rec
}

// setUsage puts the token counts, by class, on the record.
func setUsage(rec *reliability.Call, usage translate.Usage) {
	rec.PromptTokens, rec.CompletionTokens = usage.InputTokens, usage.OutputTokens
	rec.CacheReadTokens, rec.CacheWriteTokens, rec.CacheWrite1hTokens = usage.CacheClasses()
}

// failedRecord records a call that no path could serve, or that broke.
func (c *call) failedRecord(cand routing.Candidate, message string) *reliability.Call {
	rec := c.baseRecord(cand)
	rec.Status = "failed"
	rec.Error = message
	rec.ResponsePayload = []byte("null")
	rec.LatencyMs = time.Since(c.start).Milliseconds()
	return rec
}

// record hands the record to the store's writer, which also charges the
// org in the same commit; it never waits for disk. A served call tagged
// with a gated operation goes to the async eval pass.
func (c *call) record(rec *reliability.Call) {
	c.observe(rec)
	st := c.g.app.storeOrNil()
	if st == nil {
		return
	}
	st.RecordCall(rec)
	if c.gates > 0 && rec.Status == reliability.CallSucceeded {
		c.g.app.rt.worker.ScheduleEvalPass(*rec)
	}
}
