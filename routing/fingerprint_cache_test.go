package routing

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// referenceCacheFingerprint is the cache key built the plain way: the
// object written in any order, then canonicalised by re-parsing it.
func referenceCacheFingerprint(f *fingerprintFields, prompt, tier string, tierStrict bool) string {
	obj := []byte(`{"prompt":`)
	obj = translate.AppendJSONString(obj, prompt)
	obj = append(obj, `,"tier":`...)
	obj = translate.AppendJSONString(obj, tier)
	if tierStrict {
		obj = append(obj, `,"tier_strict":true`...)
	} else {
		obj = append(obj, `,"tier_strict":false`...)
	}
	obj = appendRawMember(obj, "model", f.model)
	obj = appendRawMember(obj, "temperature", f.temperature)
	obj = appendRawMember(obj, "top_p", f.topP)
	obj = appendRawMember(obj, "max_tokens", f.maxTokens)
	if f.stopString {
		obj = append(obj, `,"stop":[`...)
		obj = append(obj, f.stop.Raw...)
		obj = append(obj, ']')
	} else {
		obj = appendRawMember(obj, "stop", f.stop)
	}
	obj = appendRawMember(obj, "seed", f.seed)
	obj = appendRawMember(obj, "response_format", f.responseFormat)
	obj = appendRawMember(obj, "tools", f.tools)
	for i, name := range extraCacheFields {
		obj = appendRawMember(obj, name, f.extra[i])
	}
	if f.dialect == translate.Embeddings {
		obj = appendRawMember(obj, "dimensions", f.dimensions)
		obj = appendRawMember(obj, "encoding_format", f.encodingFormat)
		obj = appendRawMember(obj, "quantization", f.quantization)
	}
	obj = append(obj, '}')
	return digest(cachePrefix, translate.AppendCanonical(nil, gjson.ParseBytes(obj)))
}

// appendRawMember appends `,"key":` and v as the body wrote it, unless v is
// absent or null.
func appendRawMember(dst []byte, key string, v gjson.Result) []byte {
	if isNull(v) {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return append(dst, v.Raw...)
}

// TestCacheFingerprintMatchesReference: the one-pass canonical writer gives
// the same key as canonicalising the whole object, for every shape.
func TestCacheFingerprintMatchesReference(t *testing.T) {
	bodies := []struct {
		d    translate.Dialect
		body string
	}{
		{translate.Chat, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{translate.Chat, `{"model":"m\u00e9","messages":[],"temperature":0.70,"top_p":1,"max_completion_tokens":9,"stop":"EN\"D","seed":7,"n":2,
			"tools":[{"type":"function","function":{"name":"f","parameters":{"z":1,"a":{"y":[3,{"b":1,"a":2}]}}}}],
			"response_format":{"type":"json_schema","json_schema":{"schema":{"b":1,"a":2}}},"tool_choice":"required","logit_bias":{"2":1,"10":-1}}`},
		{translate.Chat, `{"model":"m","messages":[],"stop":["a","b"],"presence_penalty":null}`},
		{translate.Messages, `{"model":"m","max_tokens":100,"messages":[],"stop_sequences":["x"],"top_k":5,"thinking":{"type":"enabled"}}`},
		{translate.Responses, `{"model":"m","input":"hi","max_output_tokens":10,"text":{"format":{"type":"json_schema","schema":{}}},"parallel_tool_calls":true}`},
		{translate.Embeddings, `{"model":"m","input":["hi"],"dimensions":64,"encoding_format":"base64","quantization":"q8"}`},
	}
	for _, b := range bodies {
		for _, tier := range []string{"standard", "batch"} {
			for _, strict := range []bool{false, true} {
				f := readFingerprintFields(b.d, gjson.Parse(b.body))
				got := cacheFingerprint(&f, "fp_p_abc", tier, strict)
				want := referenceCacheFingerprint(&f, "fp_p_abc", tier, strict)
				if got != want {
					t.Fatalf("%s %s %v: %s != %s", b.body, tier, strict, got, want)
				}
			}
		}
	}
}
