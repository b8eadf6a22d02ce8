package caddymodule

import (
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// delivery is the SPEC 2.4 block attached to every completion.
type delivery struct {
	tier         string
	servedBy     string
	provider     string
	quantization string
	upgraded     bool
	etaMs        *int64
	cost         *float64
	upstreamCost *float64
	latencyMs    int64
	gates        int
	scheduled    bool
	fps          routing.Fingerprints
	// encoded is the block as JSON once json has run: the answer and the
	// call's record carry the same bytes, so they are encoded once.
	encoded []byte
}

// newDelivery builds the delivery block of a served call. Pinned calls are
// billed at the model's direct price, routed calls below the reference's
// (routing.Pricing); the upstream's own price is kept for the record.
func (c *call) newDelivery(cand routing.Candidate, usage translate.Usage, result *translate.Result) *delivery {
	billed, upstream := c.g.app.pricing.Bill(c.route.Served(cand), usage)
	billed = c.capToReservation(billed, usage)
	d := &delivery{
		tier:         c.route.Tier,
		servedBy:     cand.Path.ServedBy,
		provider:     cand.Provider.Name,
		quantization: cand.Path.Quantization,
		upgraded:     c.route.Upgraded,
		cost:         billed,
		upstreamCost: upstream,
		latencyMs:    time.Since(c.start).Milliseconds(),
		gates:        c.gates,
		scheduled:    c.gates > 0,
		fps:          c.fps,
	}
	if d.tier == "batch" {
		// Served synchronously: the result is already here.
		var zero int64
		d.etaMs = &zero
	}
	d.fps.Exchange = routing.ExchangeFingerprint(c.canon, result)
	if result != nil {
		c.finishReason = result.FinishReason
	}
	return d
}

// deliveryJSONSize fits the encoded block of a typical call, so that
// encoding it allocates once.
const deliveryJSONSize = 512

// json is the block as a JSON object. The block must not change after the
// first call. Holders of the result only read it.
func (d *delivery) json() []byte {
	if d.encoded == nil {
		d.encoded = d.appendJSON(make([]byte, 0, deliveryJSONSize))
	}
	return d.encoded[:len(d.encoded):len(d.encoded)]
}

// appendJSON appends the block as a JSON object.
func (d *delivery) appendJSON(b []byte) []byte {
	b = append(b, `{"tier":`...)
	b = translate.AppendJSONString(b, d.tier)
	b = append(b, `,"served_by":`...)
	b = translate.AppendJSONString(b, d.servedBy)
	b = append(b, `,"provider":`...)
	b = translate.AppendJSONString(b, d.provider)
	b = append(b, `,"quantization":`...)
	if d.quantization == "" {
		b = append(b, "null"...)
	} else {
		b = translate.AppendJSONString(b, d.quantization)
	}
	b = append(b, `,"upgraded":`...)
	b = strconv.AppendBool(b, d.upgraded)
	if d.etaMs != nil {
		b = append(b, `,"eta_ms":`...)
		b = strconv.AppendInt(b, *d.etaMs, 10)
	}
	b = append(b, `,"cost_usd":`...)
	b = appendFloatOrNull(b, d.cost)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendInt(b, d.latencyMs, 10)
	b = append(b, `,"evals":{"gates":`...)
	b = strconv.AppendInt(b, int64(d.gates), 10)
	b = append(b, `,"scheduled":`...)
	b = strconv.AppendBool(b, d.scheduled)
	b = append(b, `},"fingerprints":{"prompt":`...)
	b = translate.AppendJSONString(b, d.fps.Prompt)
	b = append(b, `,"exchange":`...)
	b = appendStringOrNull(b, d.fps.Exchange)
	b = append(b, `,"schema":`...)
	b = appendStringOrNull(b, d.fps.Schema)
	b = append(b, `,"cache":`...)
	b = translate.AppendJSONString(b, d.fps.Cache)
	return append(b, "}}"...)
}

func appendFloatOrNull(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, *f, 'g', -1, 64)
}

func appendStringOrNull(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return translate.AppendJSONString(b, *s)
}

// capToReservation bounds a bill by the credit reserved for the call, so
// that the org's balance never crosses its floor: only an upstream that
// ignores the request's max_tokens, or input far denser than the estimate,
// can bill more, and the gateway then absorbs the difference (logged).
func (c *call) capToReservation(billed *float64, usage translate.Usage) *float64 {
	if billed == nil || c.reservation == nil || *billed <= c.reservation.USD() {
		return billed
	}
	capped := c.reservation.USD()
	c.g.logger.Warn("call billed at its reservation: the usage exceeded the worst case reserved",
		zap.String("call", c.id), zap.Float64("bill_usd", *billed), zap.Float64("reserved_usd", capped),
		zap.Int("input_tokens", usage.InputTokens), zap.Int("output_tokens", usage.OutputTokens))
	return &capped
}
