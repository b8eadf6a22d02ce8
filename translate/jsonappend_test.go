package translate

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestAppendKeyAndSep(t *testing.T) {
	b := []byte{'{'}
	b = appendStringField(b, "a", "x")
	b = append(appendKey(b, "b"), '[')
	b = append(appendSep(b), '1')
	b = append(appendSep(b), '2')
	b = append(b, "]}"...)
	if string(b) != `{"a":"x","b":[1,2]}` {
		t.Errorf("got %s", b)
	}
}

func TestAppendCompactJSON(t *testing.T) {
	in := "{\n  \"a b\": [1, 2],\r\n\t\"c\": \"x \\\" y\"\n}"
	want := `{"a b":[1,2],"c":"x \" y"}`
	if got := string(appendCompactJSON(nil, in)); got != want {
		t.Errorf("got %s", got)
	}
	if got := compactJSON(in); got != want {
		t.Errorf("compactJSON %s", got)
	}
	compact := `{"a b":"c d"}`
	if got := compactJSON(compact); got != compact {
		t.Errorf("compact input changed: %s", got)
	}
}

func FuzzAppendCompactJSON(f *testing.F) {
	f.Add("{\"a\": [1, 2, {\"b\": \" x \"}]}")
	f.Add("\"\\\\\" ")
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got := appendCompactJSON(nil, s); string(got) != want.String() {
			t.Fatalf("%q compacted to %q, want %q", s, got, want.String())
		}
	})
}
