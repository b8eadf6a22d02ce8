package translate

import "testing"

func TestSingleLine(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                  `{"a":1}`,
		"{\n  \"a\": \"x\\ny\"\n}": `{"a":"x\ny"}`,
		"not\njson\r":              "not json ",
	} {
		if got := string(singleLine([]byte(in))); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestSetRawAndStrings(t *testing.T) {
	data := []byte(`{"type":"message_delta"}`)
	if got := string(setRaw(data, "delivery", []byte("{\n \"tier\": \"batch\"\n}"))); got != `{"type":"message_delta","delivery":{"tier":"batch"}}` {
		t.Errorf("got %s", got)
	}
	if got := string(setRaw(data, "delivery", []byte("{bad"))); got != string(data) {
		t.Errorf("invalid delivery attached: %s", got)
	}
	if got := string(setStrings([]byte(`{"response":{"id":"a"}}`), "response.id", "b", "response.model", "m")); got != `{"response":{"id":"b","model":"m"}}` {
		t.Errorf("got %s", got)
	}
}
