package translate

import (
	"testing"
)

// embeddingsBase is a valid embeddings request that uses every validated
// field; the invalid cases each break one rule of it.
const embeddingsBase = `{
  "model": "router-embed-1",
  "input": ["The quick brown fox", "jumps over the lazy dog"],
  "encoding_format": "float",
  "dimensions": 256,
  "quantization": "q8",
  "forbid_atlas_network": true,
  "user": "user-42",
  "metadata": {"operation_id": "search_index"}
}`

// embeddingsObjects is a valid body whose inputs are content objects.
const embeddingsObjects = `{
  "model": "router-embed-1",
  "input": [
    {"content": [{"type": "text", "text": "a cat"}, {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]},
    {"content": [{"type": "text", "text": "a dog"}]}
  ]
}`

func embeddingsInvalidCases(t testing.TB) []invalidCase {
	set := func(path, raw string) string { return withRaw(t, embeddingsBase, path, raw) }
	obj := func(path, raw string) string { return withRaw(t, embeddingsObjects, path, raw) }
	return append(bodyCases(), []invalidCase{
		{"model missing", set("model", ""), "model"},
		{"model number", set("model", `1`), "model"},
		{"input missing", set("input", ""), "input"},
		{"input null", set("input", `null`), "input"},
		{"input empty string", set("input", `""`), "input"},
		{"input empty array", set("input", `[]`), "input"},
		{"input number", set("input", `3`), "input"},
		{"input object", set("input", `{"content":[]}`), "input"},
		{"input empty item", set("input.1", `""`), "input[1]"},
		{"input token array", set("input", `[[1, 2, 3]]`), "input[0]"},
		{"input tokens", set("input", `[1, 2, 3]`), "input[0]"},
		{"input mixed string then object", set("input.1", `{"content":[{"type":"text","text":"x"}]}`), "input[1]"},
		{"input mixed object then string", obj("input.1", `"a dog"`), "input[1]"},
		{"content missing", obj("input.1.content", ""), "input[1].content"},
		{"content string", obj("input.1.content", `"a dog"`), "input[1].content"},
		{"content empty", obj("input.1.content", `[]`), "input[1].content"},
		{"content part type unknown", obj("input.0.content.0.type", `"audio"`), "input[0].content[0].type"},
		{"content part text missing", obj("input.0.content.0.text", ""), "input[0].content[0].text"},
		{"content part url relative", obj("input.0.content.1.image_url.url", `"cat.png"`), "input[0].content[1].image_url.url"},
		{"encoding_format unknown", set("encoding_format", `"int8"`), "encoding_format"},
		{"dimensions zero", set("dimensions", `0`), "dimensions"},
		{"dimensions fraction", set("dimensions", `256.5`), "dimensions"},
		{"dimensions string", set("dimensions", `"256"`), "dimensions"},
		{"quantization unknown", set("quantization", `"q2"`), "quantization"},
		{"forbid_atlas_network string", set("forbid_atlas_network", `"yes"`), "forbid_atlas_network"},
		{"user number", set("user", `1`), "user"},
		{"metadata string", set("metadata", `"x"`), "metadata"},
		{"operation_id number", set("metadata.operation_id", `1`), "metadata.operation_id"},
	}...)
}

func TestParseEmbeddingsRejects(t *testing.T) {
	runInvalid(t, ParseEmbeddings, embeddingsInvalidCases(t))
}

func TestParseEmbeddingsAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want Request
	}{
		{
			name: "one string",
			body: `{"model":"openai/text-embedding-3-small","input":"hello world"}`,
			want: Request{Dialect: Embeddings, Model: "openai/text-embedding-3-small"},
		},
		{
			name: "every validated field",
			body: embeddingsBase,
			want: Request{Dialect: Embeddings, Model: "router-embed-1", Quantization: "q8", ForbidAtlasNetwork: true, User: "user-42", OperationID: "search_index"},
		},
		{
			name: "content objects",
			body: embeddingsObjects,
			want: Request{Dialect: Embeddings, Model: "router-embed-1"},
		},
		{
			name: "unknown members pass, tier is not read",
			body: `{"model":"m","input":"x","tier":"nonsense","stream":"maybe","encoding_format":"base64","quantization":"full"}`,
			want: Request{Dialect: Embeddings, Model: "m", Quantization: "full"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEmbeddings([]byte(tc.body))
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func BenchmarkParseEmbeddings(b *testing.B) {
	body := []byte(embeddingsBase)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseEmbeddings(body); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseEmbeddings(f *testing.F) {
	f.Add([]byte(embeddingsBase))
	f.Add([]byte(embeddingsObjects))
	for _, tc := range embeddingsInvalidCases(f) {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(`{"model":"m","input":["é","` + "\xc3" + `"]}`))
	f.Fuzz(func(t *testing.T, body []byte) { fuzzParse(t, ParseEmbeddings, body) })
}
