package translate

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func canonical(s string) string {
	return string(AppendCanonical(nil, gjson.Parse(s)))
}

func TestAppendCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{ "b" : 1 , "a" : [ 1 , 2 ] }`, `{"a":[1,2],"b":1}`},
		{`{"z":{"y":1,"x":{"w":true,"v":false}},"a":null}`, `{"a":null,"z":{"x":{"v":false,"w":true},"y":1}}`},
		{`[{"b":1,"a":2},{"d":3,"c":4}]`, `[{"a":2,"b":1},{"c":4,"d":3}]`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`"caf\u00e9"`, `"café"`},
		{`"a\/b"`, `"a/b"`},
		{`"tab\there\u0001"`, `"tab\there\u0001"`},
		{`"quote\" backslash\\"`, `"quote\" backslash\\"`},
		{`"\ud83d\ude00"`, `"😀"`},
		// Pinned escapes: fingerprints are stored, so the encoding of
		// these characters must never drift.
		{`"\b\f\u2028\u2029<&>"`, `"\u0008\u000c\u2028\u2029<&>"`},
		{"\"bad \xff byte\"", `"bad ` + "\uFFFD" + ` byte"`},
		{`1.0`, `1.0`},
		{`-0`, `-0`},
		{`1e3`, `1e3`},
		{`{"n":12.50}`, `{"n":12.50}`},
		// Members that repeat a key keep their order.
		{`{"b":1,"a":2,"b":3}`, `{"a":2,"b":1,"b":3}`},
		// Keys sort by their unescaped bytes.
		{`{"\u0062":1,"a":2,"B":3}`, `{"B":3,"a":2,"b":1}`},
	} {
		if got := canonical(tc.in); got != tc.want {
			t.Errorf("canonical(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := string(AppendCanonical([]byte("x="), gjson.Result{})); got != "x=null" {
		t.Errorf("missing value: %s", got)
	}
}

func TestAppendCanonicalEqualSpellings(t *testing.T) {
	a := `{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"Café"}},"required":["city"]}}`
	b := "{\n  \"parameters\": {\n    \"required\": [\"city\"],\n    \"properties\": {\"city\": {\"description\": \"Caf\\u00e9\", \"type\": \"string\"}},\n    \"type\": \"object\"\n  },\n  \"name\": \"get_weather\"\n}"
	if canonical(a) != canonical(b) {
		t.Fatalf("equal documents encode differently:\n%s\n%s", canonical(a), canonical(b))
	}
	if canonical(a) == canonical(strings.Replace(a, `"city"]`, `"town"]`, 1)) {
		t.Fatal("different documents encode alike")
	}
}

// TestAppendCanonicalLargeObject covers objects with more members than the
// sort buffer on the stack holds.
func TestAppendCanonicalLargeObject(t *testing.T) {
	var in, want strings.Builder
	in.WriteString("{")
	want.WriteString("{")
	for i := 25; i >= 0; i-- {
		if i < 25 {
			in.WriteString(",")
		}
		in.WriteString(`"` + string(rune('a'+i)) + `":` + string(rune('0'+i%10)))
	}
	for i := 0; i <= 25; i++ {
		if i > 0 {
			want.WriteString(",")
		}
		want.WriteString(`"` + string(rune('a'+i)) + `":` + string(rune('0'+i%10)))
	}
	in.WriteString("}")
	want.WriteString("}")
	if got := canonical(in.String()); got != want.String() {
		t.Fatalf("got %s\nwant %s", got, want.String())
	}
}

func BenchmarkAppendCanonical(b *testing.B) {
	v := gjson.ParseBytes(realisticChatBody())
	buf := make([]byte, 0, len(v.Raw))
	b.SetBytes(int64(len(v.Raw)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCanonical(buf[:0], v)
	}
}

// surrogateEscape matches the \uD800-\uDFFF escapes whose unpaired forms
// decoders disagree on.
var surrogateEscape = regexp.MustCompile(`(?i)\\ud[89a-f]`)

func FuzzAppendCanonical(f *testing.F) {
	f.Add(`{"b":[1,{"d":null,"c":"x"}],"a":"\u00e9"}`)
	f.Add(`[1.50,-0,1e-7,"\n",true,false]`)
	f.Add("\"\xff\xfe\"")
	f.Add(`{"a":1,"a":2}`)
	f.Add(`[1e700]`)
	f.Fuzz(func(t *testing.T, in string) {
		if !nestedWithin(in, maxDepth) || !gjson.Valid(in) {
			return
		}
		out := canonical(in)
		if !json.Valid([]byte(out)) {
			t.Fatalf("invalid output %q for %q", out, in)
		}
		if again := canonical(out); again != out {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
		if surrogateEscape.MatchString(in) {
			return
		}
		// Numbers beyond float64 (1e700) are kept as written but do not
		// decode; there is nothing to compare them with.
		var want, got any
		if json.Unmarshal([]byte(in), &want) != nil {
			return
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("meaning changed: %q became %q", in, out)
		}
	})
}

// TestAppendCanonicalWithoutHints: cache_control members go at any depth,
// every other member stays.
func TestAppendCanonicalWithoutHints(t *testing.T) {
	in := `{"b":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}],"cache_control":1,"a":{"cache_control":null,"k":"v"}}`
	want := `{"a":{"k":"v"},"b":[{"text":"x","type":"text"}]}`
	if got := string(AppendCanonicalWithoutHints(nil, gjson.Parse(in))); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := string(AppendCanonical(nil, gjson.Parse(in))); !strings.Contains(got, "cache_control") {
		t.Errorf("AppendCanonical dropped a hint: %s", got)
	}
}
