package routing

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// Fingerprints are the four fingerprints of SPEC 2.4, as the delivery block
// carries them. Each is SHA-256 over a canonical form, in lowercase hex
// behind its prefix.
type Fingerprints struct {
	// Prompt (fp_p_) identifies the normalized prompt content; the same
	// content gives the same value whatever the model and the wire shape.
	Prompt string `json:"prompt"`
	// Exchange (fp_e_) identifies the prompt together with the assistant's
	// result; nil when the assistant produced nothing.
	Exchange *string `json:"exchange"`
	// Schema (fp_s_) identifies the JSON schemas attached to the request;
	// nil when none is attached.
	Schema *string `json:"schema"`
	// Cache (fp_c_) is the strict response-cache key: equal keys mean the
	// requests are equivalent and may share a cached response.
	Cache string `json:"cache"`
}

// Fingerprint prefixes (SPEC 2.4).
const (
	promptPrefix   = "fp_p_"
	exchangePrefix = "fp_e_"
	schemaPrefix   = "fp_s_"
	cachePrefix    = "fp_c_"
)

// RequestFingerprints computes the prompt, schema and cache fingerprints of a
// request body in the given client dialect; the body should have passed that
// dialect's validation. tier is the effective tier (default "standard"
// already applied), tierStrict the effective flag. It also returns the
// canonical prompt bytes for ExchangeFingerprint.
//
// The cache key covers the prompt fingerprint and the fields SPEC 2.4 lists,
// under one name whatever the shape called them: max_tokens is chat's
// max_completion_tokens (or max_tokens), messages' max_tokens or responses'
// max_output_tokens; stop is chat's stop (a lone string read as a
// one-element array) or messages' stop_sequences; response_format is chat's
// response_format or responses' text.format. Embeddings calls, whose output
// those fields do not shape, add dimensions, encoding_format and
// quantization instead. Absent and null fields are left out.
func RequestFingerprints(d translate.Dialect, body []byte, tier string, tierStrict bool) (fp Fingerprints, canonicalPrompt []byte) {
	fp, canonicalPrompt, _ = RequestFacts(d, body, tier, tierStrict)
	return fp, canonicalPrompt
}

// RequestFacts is RequestFingerprints that also returns the request's own
// output limit (chat max_completion_tokens or max_tokens, messages
// max_tokens, responses max_output_tokens), read in the same pass; 0 when
// the request sets none.
func RequestFacts(d translate.Dialect, body []byte, tier string, tierStrict bool) (fp Fingerprints, canonicalPrompt []byte, maxTokens int64) {
	var p translate.Prompt
	switch d {
	case translate.Chat:
		p = translate.ChatPrompt(body)
	case translate.Messages:
		p = translate.MessagesPrompt(body)
	case translate.Responses:
		p = translate.ResponsesPrompt(body)
	case translate.Embeddings:
		p = translate.EmbeddingsPrompt(body)
	}
	canonicalPrompt = p.AppendCanonical(nil)
	fp.Prompt = digest(promptPrefix, canonicalPrompt)

	f := readFingerprintFields(d, gjson.ParseBytes(body))
	fp.Schema = schemaFingerprint(&f)
	fp.Cache = cacheFingerprint(&f, fp.Prompt, tier, tierStrict)
	if f.maxTokens.Type == gjson.Number {
		maxTokens = max(f.maxTokens.Int(), 0)
	}
	return fp, canonicalPrompt, maxTokens
}

// ExchangeFingerprint returns the fp_e_ fingerprint of a prompt (its
// canonical bytes from RequestFingerprints) and the assistant's result, or
// nil when the result is empty. It is model-agnostic: the result is encoded
// as the assistant turn of a Prompt, so its text, tool names and canonical
// arguments count while the tool call ids each upstream mints do not.
func ExchangeFingerprint(canonicalPrompt []byte, r *translate.Result) *string {
	if r == nil || r.Empty() {
		return nil
	}
	turn := translate.Turn{Role: "assistant", Parts: make([]translate.Part, 0, 1+len(r.ToolCalls))}
	if r.Text != "" {
		turn.Parts = append(turn.Parts, translate.Part{Type: "text", Text: r.Text})
	}
	for _, tc := range r.ToolCalls {
		turn.Parts = append(turn.Parts, translate.Part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	result := translate.Prompt{Turns: []translate.Turn{turn}}
	// The canonical form is {"prompt":<canonical prompt>,"result":<the
	// result as a canonical Prompt>}; it is hashed in pieces so the prompt,
	// which may be large, is not copied.
	h := sha256.New()
	h.Write(exchangeOpen)
	h.Write(canonicalPrompt)
	h.Write(exchangeMiddle)
	h.Write(result.AppendCanonical(make([]byte, 0, 128+len(r.Text))))
	h.Write(exchangeClose)
	s := hexDigest(exchangePrefix, h.Sum(make([]byte, 0, sha256.Size)))
	return &s
}

// The fixed pieces of the exchange fingerprint's canonical form.
var (
	exchangeOpen   = []byte(`{"prompt":`)
	exchangeMiddle = []byte(`,"result":`)
	exchangeClose  = []byte(`}`)
)

// digest returns prefix followed by the lowercase hex SHA-256 of canonical.
func digest(prefix string, canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hexDigest(prefix, sum[:])
}

// hexDigest returns prefix followed by sum in lowercase hex.
func hexDigest(prefix string, sum []byte) string {
	b := make([]byte, 0, len(prefix)+2*len(sum))
	b = append(b, prefix...)
	b = hex.AppendEncode(b, sum)
	return string(b)
}

// fingerprintFields are the request fields the schema and cache fingerprints
// read, under their shape-independent names.
type fingerprintFields struct {
	model, temperature, topP, maxTokens, stop, seed, responseFormat, tools gjson.Result
	dimensions, encodingFormat, quantization                               gjson.Result
	// extra holds the extraCacheFields, by index.
	extra [len(extraCacheFields)]gjson.Result
	// stopString is set when stop is chat's lone string.
	stopString bool
	// outputSchema is the structured-output schema object: chat's
	// response_format.json_schema or responses' text.format.
	outputSchema gjson.Result
	dialect      translate.Dialect
}

// readFingerprintFields reads the fields in one pass over the body's members.
func readFingerprintFields(d translate.Dialect, root gjson.Result) fingerprintFields {
	f := fingerprintFields{dialect: d}
	var maxTokens, maxCompletionTokens, maxOutputTokens, stop, stopSequences, text gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		var dst *gjson.Result
		switch k.Str {
		case "model":
			dst = &f.model
		case "temperature":
			dst = &f.temperature
		case "top_p":
			dst = &f.topP
		case "max_tokens":
			dst = &maxTokens
		case "max_completion_tokens":
			dst = &maxCompletionTokens
		case "max_output_tokens":
			dst = &maxOutputTokens
		case "stop":
			dst = &stop
		case "stop_sequences":
			dst = &stopSequences
		case "seed":
			dst = &f.seed
		case "response_format":
			dst = &f.responseFormat
		case "text":
			dst = &text
		case "tools":
			dst = &f.tools
		case "dimensions":
			dst = &f.dimensions
		case "encoding_format":
			dst = &f.encodingFormat
		case "quantization":
			dst = &f.quantization
		default:
			if i := slices.Index(extraCacheFields[:], k.Str); i >= 0 {
				dst = &f.extra[i]
			}
		}
		// The first of repeated keys counts, as in every gjson lookup;
		// validation rejects repeats of the fields it reads.
		if dst != nil && !dst.Exists() {
			*dst = v
		}
		return true
	})
	switch d {
	case translate.Chat:
		f.maxTokens = maxCompletionTokens
		if isNull(f.maxTokens) {
			f.maxTokens = maxTokens
		}
		f.stop, f.stopString = stop, stop.Type == gjson.String
		if f.responseFormat.Get("type").Str == "json_schema" {
			f.outputSchema = f.responseFormat.Get("json_schema")
		}
	case translate.Messages:
		f.maxTokens, f.stop = maxTokens, stopSequences
		f.responseFormat = gjson.Result{}
	case translate.Responses:
		f.maxTokens = maxOutputTokens
		f.responseFormat = text.Get("format")
		if f.responseFormat.Get("type").Str == "json_schema" {
			f.outputSchema = f.responseFormat
		}
	case translate.Embeddings:
		f.responseFormat = gjson.Result{}
	}
	return f
}

// isNull reports whether a field is absent or null; the fingerprints treat
// both alike, as validation does.
func isNull(v gjson.Result) bool { return v.Type == gjson.Null }

// cacheFingerprint computes the fp_c_ key. The members are written in any
// order and the object is then made canonical, which sorts them.
func cacheFingerprint(f *fingerprintFields, prompt, tier string, tierStrict bool) string {
	// The canonical object is written directly, members in key order and
	// values canonical, instead of building it and re-parsing it.
	var buf [32]cacheMember
	ms := append(buf[:0],
		cacheMember{key: "prompt", str: prompt, kind: memberString},
		cacheMember{key: "tier", str: tier, kind: memberString},
		cacheMember{key: "tier_strict", flag: tierStrict, kind: memberBool},
	)
	add := func(key string, v gjson.Result) {
		if !isNull(v) {
			ms = append(ms, cacheMember{key: key, val: v, kind: memberValue})
		}
	}
	add("model", f.model)
	add("temperature", f.temperature)
	add("top_p", f.topP)
	add("max_tokens", f.maxTokens)
	if f.stopString {
		ms = append(ms, cacheMember{key: "stop", val: f.stop, kind: memberWrapped})
	} else {
		add("stop", f.stop)
	}
	add("seed", f.seed)
	add("response_format", f.responseFormat)
	add("tools", f.tools)
	for i, name := range extraCacheFields {
		add(name, f.extra[i])
	}
	if f.dialect == translate.Embeddings {
		add("dimensions", f.dimensions)
		add("encoding_format", f.encodingFormat)
		add("quantization", f.quantization)
	}
	slices.SortStableFunc(ms, func(a, b cacheMember) int { return strings.Compare(a.key, b.key) })
	obj := make([]byte, 0, 256+len(f.tools.Raw)+len(f.responseFormat.Raw))
	obj = append(obj, '{')
	for i, m := range ms {
		if i > 0 {
			obj = append(obj, ',')
		}
		obj = translate.AppendJSONString(obj, m.key)
		obj = append(obj, ':')
		switch m.kind {
		case memberString:
			obj = translate.AppendCanonical(obj, gjson.Result{Type: gjson.String, Str: m.str})
		case memberBool:
			obj = strconv.AppendBool(obj, m.flag)
		case memberWrapped:
			obj = append(obj, '[')
			obj = translate.AppendCanonical(obj, m.val)
			obj = append(obj, ']')
		default:
			// Prompt-cache hints (on tools, say) change the price, not
			// the answer.
			obj = translate.AppendCanonicalWithoutHints(obj, m.val)
		}
	}
	obj = append(obj, '}')
	return digest(cachePrefix, obj)
}

// cacheMember is one member of the cache fingerprint's canonical object.
type cacheMember struct {
	key  string
	kind uint8
	str  string
	flag bool
	val  gjson.Result
}

// Kinds of cacheMember: a literal string or boolean of the gateway's, a
// value from the body, or a lone stop string read as a one-element array.
const (
	memberValue uint8 = iota
	memberString
	memberBool
	memberWrapped
)

// extraCacheFields shape the output too, beyond the fields SPEC 2.4 lists:
// two requests that differ in one of them are not equivalent, so they must
// not share a cached response.
var extraCacheFields = [...]string{
	"n", "tool_choice", "parallel_tool_calls", "presence_penalty", "frequency_penalty",
	"logit_bias", "logprobs", "top_logprobs", "top_k", "reasoning_effort", "reasoning",
	"thinking", "previous_response_id", "modalities", "audio", "prediction", "truncation",
}

// schemaFingerprint computes the fp_s_ fingerprint of the attached JSON
// schemas, or nil when there are none. Its canonical form is the same for
// the same schemas in every shape:
//
//	{"output":{"description":..,"name":..,"schema":..,"strict":..},
//	 "tools":[{"name":..,"parameters":..},...]}
//
// output is the structured-output schema (chat response_format.json_schema,
// responses text.format of type json_schema, without its type tag) and tools
// the schemas of the tools that have one (chat function.parameters,
// messages input_schema, responses parameters) bound to the tool's name.
// Either member is left out when empty.
func schemaFingerprint(f *fingerprintFields) *string {
	obj := make([]byte, 0, 64+len(f.tools.Raw)+len(f.outputSchema.Raw))
	obj = append(obj, '{')
	if f.outputSchema.IsObject() {
		obj = append(obj, `"output":{`...)
		n := len(obj)
		f.outputSchema.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "description", "name", "schema", "strict":
				if len(obj) > n {
					obj = append(obj, ',')
				}
				obj = append(obj, k.Raw...)
				obj = append(obj, ':')
				obj = append(obj, v.Raw...)
			}
			return true
		})
		obj = append(obj, '}')
	}
	tools := 0
	f.tools.ForEach(func(_, tool gjson.Result) bool {
		name, schema := toolSchema(f.dialect, tool)
		if isNull(schema) {
			return true
		}
		switch {
		case tools == 0 && len(obj) > 1:
			obj = append(obj, `,"tools":[`...)
		case tools == 0:
			obj = append(obj, `"tools":[`...)
		default:
			obj = append(obj, ',')
		}
		tools++
		obj = append(obj, `{"name":`...)
		obj = translate.AppendJSONString(obj, name.Str)
		obj = append(obj, `,"parameters":`...)
		obj = append(obj, schema.Raw...)
		obj = append(obj, '}')
		return true
	})
	if tools > 0 {
		obj = append(obj, ']')
	}
	if len(obj) == 1 {
		return nil
	}
	obj = append(obj, '}')
	s := digest(schemaPrefix, translate.AppendCanonical(make([]byte, 0, len(obj)), gjson.ParseBytes(obj)))
	return &s
}

// toolSchema returns a tool's name and the JSON schema of its input, where
// each shape keeps them.
func toolSchema(d translate.Dialect, tool gjson.Result) (name, schema gjson.Result) {
	switch d {
	case translate.Chat:
		fn := tool.Get("function")
		return fn.Get("name"), fn.Get("parameters")
	case translate.Messages:
		return tool.Get("name"), tool.Get("input_schema")
	case translate.Responses:
		return tool.Get("name"), tool.Get("parameters")
	}
	return gjson.Result{}, gjson.Result{}
}
