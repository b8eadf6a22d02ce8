package translate

import (
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// gatewayFields are top-level request fields that only the gateway reads.
// They are never sent upstream: strict upstreams reject unknown fields.
var gatewayFields = [...]string{"tier", "tier_strict", "forbid_atlas_network", "quantization"}

// PrepareRequest turns a validated client request into the body sent to an
// upstream that speaks the given dialect for the model upstreamModel.
// Gateway-only fields are removed, the model is replaced, and streamed calls to
// a chat-completions upstream always ask for usage so that the call can be
// metered. Fields the gateway does not know pass through untouched.
func PrepareRequest(client, upstream Dialect, body []byte, upstreamModel string, stream bool) ([]byte, error) {
	if client != upstream {
		return translateRequest(client, upstream, body, upstreamModel, stream)
	}
	out, err := StripGatewayFields(body)
	if err != nil {
		return nil, err
	}
	if m := gjson.GetBytes(out, "model"); spliceable(m, out) {
		// Validation rejects a repeated model member, so this one value is
		// the model: write the upstream's in its place.
		dst := make([]byte, 0, len(out)+len(upstreamModel))
		dst = append(dst, out[:m.Index]...)
		dst = AppendJSONString(dst, upstreamModel)
		out = append(dst, out[m.Index+len(m.Raw):]...)
	} else if out, err = sjson.SetBytes(out, "model", upstreamModel); err != nil {
		return nil, fmt.Errorf("set upstream model: %w", err)
	}
	if stream && upstream == Chat {
		if out, err = sjson.SetBytes(out, "stream_options.include_usage", true); err != nil {
			return nil, fmt.Errorf("ask upstream for usage: %w", err)
		}
	}
	return out, nil
}

// StripGatewayFields removes the gateway-only fields from a request body,
// including metadata.operation_id (and metadata itself when nothing else is
// left in it).
func StripGatewayFields(body []byte) ([]byte, error) {
	if !mayHoldGatewayFields(body) {
		// Most bodies hold none: one pass over the top-level keys instead
		// of a lookup per field.
		return body, nil
	}
	out := body
	var err error
	for _, f := range gatewayFields {
		if gjson.GetBytes(out, f).Exists() {
			if out, err = sjson.DeleteBytes(out, f); err != nil {
				return nil, fmt.Errorf("strip %s: %w", f, err)
			}
		}
	}
	md := gjson.GetBytes(out, "metadata")
	if md.Get("operation_id").Exists() {
		if out, err = sjson.DeleteBytes(out, "metadata.operation_id"); err != nil {
			return nil, fmt.Errorf("strip metadata.operation_id: %w", err)
		}
		if rest := gjson.GetBytes(out, "metadata"); rest.IsObject() && len(rest.Map()) == 0 {
			if out, err = sjson.DeleteBytes(out, "metadata"); err != nil {
				return nil, fmt.Errorf("strip empty metadata: %w", err)
			}
		}
	}
	return out, nil
}

// mayHoldGatewayFields reports whether a top-level key of body is a
// gateway-only field or metadata, in one pass over the keys. A body that is
// not an object reports true, leaving it to the field-by-field lookups.
func mayHoldGatewayFields(body []byte) bool {
	// No string read here outlives the call: the body need not be copied.
	root := gjson.Parse(bodyString(body))
	if !root.IsObject() {
		return true
	}
	found := false
	root.ForEach(func(k, _ gjson.Result) bool {
		switch k.Str {
		case "metadata":
			found = true
		default:
			for _, f := range gatewayFields {
				if k.Str == f {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
