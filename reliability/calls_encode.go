package reliability

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// appendCall appends the stored JSON form of c, the same document
// encoding/json makes of it, without that package's reflection and its
// re-validation of the raw payloads: the call writer encodes every call,
// so this is on the gateway's hottest background path. ok is false when a
// raw payload is not valid JSON; the caller then falls back to quoting it.
// Payloads the caller has checked (c.PayloadsChecked) are not scanned.
func appendCall(b []byte, c *Call) (out []byte, ok bool) {
	if !c.PayloadsChecked {
		for _, raw := range [...][]byte{c.RequestPayload, c.ResponsePayload, c.Delivery} {
			if len(raw) > 0 && !gjson.ValidBytes(raw) {
				return b, false
			}
		}
	}
	b = append(b, `{"id":`...)
	b = translate.AppendJSONString(b, c.ID)
	b = append(b, `,"object":`...)
	b = translate.AppendJSONString(b, c.Object)
	b = append(b, `,"org_id":`...)
	b = translate.AppendJSONString(b, c.OrgID)
	if c.KeyID != "" {
		b = append(b, `,"key_id":`...)
		b = translate.AppendJSONString(b, c.KeyID)
	}
	b = append(b, `,"operation_id":`...)
	if c.OperationID == nil {
		b = append(b, "null"...)
	} else {
		b = translate.AppendJSONString(b, *c.OperationID)
	}
	b = append(b, `,"model":`...)
	b = translate.AppendJSONString(b, c.Model)
	b = append(b, `,"model_version":`...)
	b = translate.AppendJSONString(b, c.ModelVersion)
	b = append(b, `,"request_payload":`...)
	b = appendRaw(b, c.RequestPayload)
	b = append(b, `,"response_payload":`...)
	b = appendRaw(b, c.ResponsePayload)
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c.CompletionTokens), 10)
	for _, f := range [...]struct {
		name string
		n    int
	}{{`,"cache_read_tokens":`, c.CacheReadTokens}, {`,"cache_write_tokens":`, c.CacheWriteTokens}, {`,"cache_write_1h_tokens":`, c.CacheWrite1hTokens}} {
		if f.n != 0 {
			b = append(b, f.name...)
			b = strconv.AppendInt(b, int64(f.n), 10)
		}
	}
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendInt(b, c.LatencyMs, 10)
	b = append(b, `,"created_at":"`...)
	b = c.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","status":`...)
	b = translate.AppendJSONString(b, c.Status)
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = translate.AppendJSONString(b, c.Error)
	}
	b = append(b, `,"endpoint":`...)
	b = translate.AppendJSONString(b, c.Endpoint)
	b = append(b, `,"provider":`...)
	b = translate.AppendJSONString(b, c.Provider)
	b = append(b, `,"tier":`...)
	b = translate.AppendJSONString(b, c.Tier)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, c.Stream)
	b = append(b, `,"cost_usd":`...)
	b = appendFloatPtr(b, c.CostUSD)
	b = append(b, `,"upstream_cost_usd":`...)
	b = appendFloatPtr(b, c.UpstreamCostUSD)
	if len(c.Delivery) > 0 {
		b = append(b, `,"delivery":`...)
		b = append(b, c.Delivery...)
	}
	if len(c.Attempts) > 0 {
		b = append(b, `,"attempts":[`...)
		for i, a := range c.Attempts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"provider":`...)
			b = translate.AppendJSONString(b, a.Provider)
			b = append(b, `,"upstream_model":`...)
			b = translate.AppendJSONString(b, a.UpstreamModel)
			if a.Status != 0 {
				b = append(b, `,"status":`...)
				b = strconv.AppendInt(b, int64(a.Status), 10)
			}
			if a.Error != "" {
				b = append(b, `,"error":`...)
				b = translate.AppendJSONString(b, a.Error)
			}
			b = append(b, `,"latency_ms":`...)
			b = strconv.AppendInt(b, a.LatencyMs, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c.PathKey != "" {
		b = append(b, `,"path_key":`...)
		b = translate.AppendJSONString(b, c.PathKey)
	}
	if c.Cache != "" {
		b = append(b, `,"cache":`...)
		b = translate.AppendJSONString(b, c.Cache)
	}
	if c.EvalPass != nil {
		// Only a call read back from the store carries it, and readers
		// set it afresh from the eval pass's scores: rare and small, so
		// encoding/json is fine here.
		ep, err := json.Marshal(c.EvalPass)
		if err != nil {
			return b, false
		}
		b = append(append(b, `,"eval_pass":`...), ep...)
	}
	if c.Refund != nil {
		// Like EvalPass, set by readers from the ledger.
		rf, err := json.Marshal(c.Refund)
		if err != nil {
			return b, false
		}
		b = append(append(b, `,"refund":`...), rf...)
	}
	if c.UsageEstimated {
		b = append(b, `,"usage_estimated":true`...)
	}
	return append(b, '}'), true
}

func appendRaw(b, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, *f, 'g', -1, 64)
}
