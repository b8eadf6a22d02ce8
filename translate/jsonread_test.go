package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestTextParts(t *testing.T) {
	for raw, want := range map[string]string{
		`{"c":"plain"}`: "plain",
		`{"c":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]}`: "ab",
		`{"c":null}`: "",
		`{"c":7}`:    "",
	} {
		if got := textParts(gjson.Get(raw, "c")); got != want {
			t.Errorf("%s -> %q", raw, got)
		}
	}
}

func TestEachElementSkipsScalars(t *testing.T) {
	n := 0
	for _, raw := range []string{`"x"`, `null`, `3`, `{"a":1}`} {
		eachElement(gjson.Parse(raw), func(gjson.Result) bool { n++; return true })
	}
	if n != 0 {
		t.Errorf("called %d times for non-arrays", n)
	}
	eachElement(gjson.Parse(`[1,2,3]`), func(v gjson.Result) bool { n++; return v.Int() < 2 })
	if n != 2 {
		t.Errorf("called %d times, want to stop after the second", n)
	}
}
