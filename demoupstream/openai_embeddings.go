package demoupstream

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// embeddingsFields are the top-level fields the embeddings API accepts.
var embeddingsFields = fieldSet("model", "input", "dimensions", "encoding_format", "user")

const (
	// defaultDimensions is the vector length when the request names none;
	// small, because the vectors only need to be deterministic.
	defaultDimensions = 16
	maxDimensions     = 4096
	// maxInputs is the real API's limit on inputs per request.
	maxInputs = 2048
)

// embeddingsRequest is what the embeddings handler needs from a request.
type embeddingsRequest struct {
	model string
	// inputs holds the text each vector derives from: the string, the token
	// ids joined by spaces, or the parts of a content object (texts and
	// image URLs) joined by spaces.
	inputs     []string
	words      int
	dimensions int
	base64     bool
}

// readEmbeddings reads and validates an embeddings request.
func readEmbeddings(body string, strict bool) (*embeddingsRequest, *apiError) {
	root, e := parseBody(body, dialectOpenAI)
	if e != nil {
		return nil, e
	}
	var model, input, dimensions, format gjson.Result
	unknown := ""
	root.ForEach(func(k, v gjson.Result) bool {
		switch name := k.String(); name {
		case "model":
			model = v
		case "input":
			input = v
		case "dimensions":
			dimensions = v
		case "encoding_format":
			format = v
		default:
			if strict && unknown == "" && !embeddingsFields[name] {
				unknown = name
			}
		}
		return true
	})
	if unknown != "" {
		return nil, invalid("", "", "Unrecognized request argument supplied: %s", unknown)
	}
	req := &embeddingsRequest{dimensions: defaultDimensions}
	if req.model, e = openAIModel(model); e != nil {
		return nil, e
	}
	if e = readEmbeddingInput(input, req); e != nil {
		return nil, e
	}
	switch {
	case absent(dimensions):
	case !isInteger(dimensions):
		return nil, invalid("dimensions", "invalid_type", "Invalid type for 'dimensions': expected an integer, but got %s instead.", typeName(dimensions))
	case dimensions.Num < 1:
		return nil, invalid("dimensions", "integer_below_min_value", "Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got %s instead.", dimensions.Raw)
	case dimensions.Num > maxDimensions:
		return nil, invalid("dimensions", "integer_above_max_value", "Invalid 'dimensions': integer above maximum value. Expected a value <= %d, but got %s instead.", maxDimensions, dimensions.Raw)
	default:
		req.dimensions = int(dimensions.Num)
	}
	switch {
	case absent(format), format.String() == "float":
	case format.String() == "base64":
		req.base64 = true
	default:
		return nil, invalid("encoding_format", "invalid_value", "Invalid value: '%s'. Supported values are: 'float' and 'base64'.", format.String())
	}
	return req, nil
}

// readEmbeddingInput reads input: a string, an array of strings, an array
// of token ids, an array of token-id arrays, or an array of objects with
// content parts.
func readEmbeddingInput(input gjson.Result, req *embeddingsRequest) *apiError {
	switch {
	case absent(input):
		return invalid("input", "missing_required_parameter", "Missing required parameter: 'input'.")
	case input.Type == gjson.String:
		if input.Str == "" {
			return invalid("input", "invalid_value", "Invalid 'input': string must not be empty.")
		}
		req.inputs = []string{input.Str}
		req.words = countWords(input.Str)
		return nil
	case !input.IsArray():
		return invalid("input", "invalid_type", "Invalid type for 'input': expected a string or an array, but got %s instead.", typeName(input))
	}
	items := input.Array()
	switch {
	case len(items) == 0:
		return invalid("input", "empty_array", "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	case len(items) > maxInputs:
		return invalid("input", "array_above_max_length", "Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", maxInputs, len(items))
	}
	if items[0].Type == gjson.Number {
		// One token array: a single input.
		text, e := tokenText(input, "input")
		if e != nil {
			return e
		}
		req.inputs = []string{text}
		req.words = len(items)
		return nil
	}
	req.inputs = make([]string, 0, len(items))
	for i, item := range items {
		at := "input[" + strconv.Itoa(i) + "]"
		var text string
		switch {
		case item.Type == gjson.String && items[0].Type == gjson.String:
			if item.Str == "" {
				return invalid(at, "invalid_value", "Invalid '%s': string must not be empty.", at)
			}
			text = item.Str
		case item.IsArray() && items[0].IsArray():
			var e *apiError
			if text, e = tokenText(item, at); e != nil {
				return e
			}
		case item.IsObject() && items[0].IsObject():
			text = contentObjectText(item)
			if text == "" {
				return invalid(at+".content", "invalid_value", "Invalid '%s.content': expected at least one text or image_url part.", at)
			}
		default:
			return invalid(at, "invalid_type", "Invalid type for '%s': every input must have the same type as the first, but got %s.", at, typeName(item))
		}
		req.inputs = append(req.inputs, text)
		req.words += countWords(text)
	}
	return nil
}

// tokenText returns a token-id array as its ids joined by spaces.
func tokenText(tokens gjson.Result, at string) (string, *apiError) {
	var b strings.Builder
	var e *apiError
	n := 0
	tokens.ForEach(func(_, id gjson.Result) bool {
		if !isInteger(id) || id.Num < 0 {
			e = invalid(at, "invalid_type", "Invalid '%s': expected an array of non-negative integer token ids.", at)
			return false
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id.Raw)
		n++
		return true
	})
	if e == nil && n == 0 {
		e = invalid(at, "empty_array", "Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", at)
	}
	return b.String(), e
}

// contentObjectText returns the parts of a {content:[...]} input joined by
// spaces: the text of text parts, the URL of image_url parts.
func contentObjectText(item gjson.Result) string {
	var b strings.Builder
	item.Get("content").ForEach(func(_, part gjson.Result) bool {
		var s string
		switch part.Get("type").String() {
		case "text":
			s = part.Get("text").String()
		case "image_url":
			s = part.Get("image_url.url").String()
		}
		if s != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
		return true
	})
	return b.String()
}

// embed returns the deterministic unit vector of text. Raw component values
// come from a counter-mode expansion of d = sha256(text): block k is
// sha256(d || uint32le(k)), read as eight little-endian uint32 values u,
// each mapped to u/2^31 - 1 in [-1, 1). The vector is then scaled to unit
// length. Only hashing and arithmetic are involved, so the vector is the
// same on every platform and in every run.
func embed(dst []float32, text string) {
	d := sha256.Sum256([]byte(text))
	var seed [sha256.Size + 4]byte
	copy(seed[:], d[:])
	raw := make([]float64, len(dst))
	var block [sha256.Size]byte
	for i := range raw {
		if i%8 == 0 {
			binary.LittleEndian.PutUint32(seed[sha256.Size:], uint32(i/8))
			block = sha256.Sum256(seed[:])
		}
		u := binary.LittleEndian.Uint32(block[(i%8)*4:])
		raw[i] = float64(u)/(1<<31) - 1
	}
	var norm float64
	for _, x := range raw {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i, x := range raw {
		dst[i] = float32(x / norm)
	}
}

// embeddings serves POST .../embeddings.
func (s *server) embeddings(w http.ResponseWriter, r *http.Request, body string) {
	req, e := readEmbeddings(body, s.cfg.Strict)
	if e != nil {
		writeError(w, r, dialectOpenAI, e)
		return
	}
	bp := getBuffer()
	defer putBuffer(bp)
	b := append((*bp)[:0], `{"object":"list","data":[`...)
	vec := make([]float32, req.dimensions)
	var raw []byte
	if req.base64 {
		raw = make([]byte, 4*req.dimensions)
	}
	for i, text := range req.inputs {
		embed(vec, text)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = appendInt(b, i)
		b = append(b, `,"embedding":`...)
		if req.base64 {
			// Little-endian float32 bytes, as the real API and the SDKs decode them.
			for j, v := range vec {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(v))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, v := range vec {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(v), 'f', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = appendString(b, req.model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendInt(b, req.words)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, req.words)
	*bp = append(b, `}}`...)
	writeJSON(w, r, http.StatusOK, *bp)
}
