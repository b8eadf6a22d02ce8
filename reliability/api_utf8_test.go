package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"unicode/utf8"
)

// badByte never appears in UTF-8 text.
const badByte = "\xff"

// TestAPIRefusesInvalidUTF8 sends every endpoint that takes a body a string
// with a raw byte that is not UTF-8: each is a 400 naming that string, and
// nothing is stored.
func TestAPIRefusesInvalidUTF8(t *testing.T) {
	h := newAPIHarness(t)
	evID, opID, dsID := h.setup("")
	callID := h.chargedCall(h.org.ID, 0.01)
	items := "/datasets/" + dsID + "/items"
	for _, tt := range []struct {
		method, path, body, param string
	}{
		{http.MethodPost, "/feedback", fmt.Sprintf(`{"call_id":%q,"correction":"b%sd"}`, callID, badByte), "correction"},
		{http.MethodPost, "/feedback", fmt.Sprintf(`{"call_id":%q,"tags":["ok","t%s"]}`, callID, badByte), "tags[1]"},
		{http.MethodPost, "/operations", `{"key":"k","name":"n","description":"` + badByte + `"}`, "description"},
		{http.MethodPatch, "/operations/" + opID, `{"name":"n` + badByte + `"}`, "name"},
		{http.MethodPost, "/datasets", `{"operation_id":"support","name":"` + badByte + `"}`, "name"},
		{http.MethodPost, items, `{"items":[{"input":"ok"},{"input":{"q":["` + badByte + `"]}}]}`, "items[1].input.q[0]"},
		{http.MethodPost, items, `{"items":[{"input":"q","expected_output":"y` + badByte + `s"}]}`, "items[0].expected_output"},
		{http.MethodPost, items, `{"items":[{"input":{"k` + badByte + `":1}}]}`, "items[0].input.k\uFFFD"},
		{http.MethodPost, "/datasets/" + dsID + "/training", `{"notes":"` + badByte + `"}`, "notes"},
		{http.MethodPost, "/evaluators", `{"name":"r","kind":"regex","config":{"pattern":"a` + badByte + `"}}`, "config.pattern"},
		{http.MethodPatch, "/evaluators/" + evID, `{"config":{"pattern":"` + badByte + `"}}`, "config.pattern"},
		{http.MethodPost, "/evaluations", fmt.Sprintf(`{"dataset_id":%q,"evaluator_ids":[%q],"model_version":"m%s"}`, dsID, evID, badByte), "model_version"},
		{http.MethodPost, "/datasets/" + dsID + "/promote", `{"x":"` + badByte + `"}`, "x"},
	} {
		status, m := h.call(tt.method, tt.path, tt.body)
		wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, tt.param, CodeInvalidUTF8)
	}
	// A bad byte outside every string leaves the body not JSON.
	status, m := h.call(http.MethodPost, "/operations", `{"key":"k",`+badByte+`"name":"n"}`)
	wantError(t, status, m, http.StatusBadRequest, ErrorTypeInvalidRequest, "", CodeInvalidBody)

	for path, want := range map[string]int{"/operations": 1, "/datasets": 1, "/evaluators": 1, "/evaluations": 0, items: 1} {
		status, body := h.do("", http.MethodGet, path, "")
		var page struct{ Data []json.RawMessage }
		if err := json.Unmarshal(body, &page); status != http.StatusOK || err != nil || len(page.Data) != want {
			t.Fatalf("GET %s: %d %s, want %d records", path, status, body, want)
		}
	}
}

// TestAPIStoresMultiByteText checks that valid multi-byte text and escaped
// lone surrogates are accepted and read back as valid UTF-8 JSON.
func TestAPIStoresMultiByteText(t *testing.T) {
	h := newAPIHarness(t)
	const text = "héllo ✓ 日本"
	h.create("", "/operations", `{"key":"support","name":"`+text+`","description":"\ud800"}`)
	ds := h.create("", "/datasets", `{"operation_id":"support","name":"`+text+`"}`)
	items := "/datasets/" + ds["id"].(string) + "/items"
	h.create("", items, `{"items":[{"input":{"clé":"`+text+`"},"expected_output":"\udfff `+text+`"}]}`)
	for _, path := range []string{"/operations", "/datasets", items} {
		status, body := h.do("", http.MethodGet, path, "")
		if status != http.StatusOK || !json.Valid(body) || !utf8.Valid(body) {
			t.Fatalf("GET %s: %d %q", path, status, body)
		}
	}
	_, list := h.call(http.MethodGet, items, "")
	item := list["data"].([]any)[0].(map[string]any)
	if item["input"].(map[string]any)["clé"] != text {
		t.Fatalf("item %v", item)
	}
}
