package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/modelgate/gateway/internal/jsonlimit"
)

// TestTruncatePayload: a payload over the limit becomes a marker object
// within the limit, with the original size and a prefix cut at a
// character boundary; one within it is kept as is.
func TestTruncatePayload(t *testing.T) {
	small := []byte(`{"a":1}`)
	if got := truncatePayload(small, 100); !bytes.Equal(got, small) {
		t.Fatalf("small payload changed: %s", got)
	}
	big := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("é\n\"<", 5000) + `"}]}`)
	for _, limit := range []int{256, 1000, 4096} {
		got := truncatePayload(big, limit)
		if len(got) > limit || !json.Valid(got) {
			t.Fatalf("limit %d: %d bytes, valid %v", limit, len(got), json.Valid(got))
		}
		v := gjson.ParseBytes(got)
		if !v.Get("truncated").Bool() || v.Get("original_bytes").Int() != int64(len(big)) || !strings.HasPrefix(string(big), v.Get("prefix").String()) ||
			v.Get("prefix").String() == "" {
			t.Fatalf("limit %d: %s", limit, got)
		}
	}
	c := &Call{RequestPayload: big, ResponsePayload: small}
	lc := limitPayloads(c, 512)
	if lc == c || !bytes.Equal(c.RequestPayload, big) || !bytes.Equal(lc.ResponsePayload, small) || len(lc.RequestPayload) > 512 {
		t.Fatal("limitPayloads must copy, not change, the call")
	}
	if limitPayloads(c, -1) != c {
		t.Fatal("a negative limit keeps payloads whole")
	}
}

// TestRecordCallTruncatesLargePayloads: the store keeps a large payload as
// the marker, so one large call costs the store about the limit.
func TestRecordCallTruncatesLargePayloads(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	s.SetRetention(Retention{MaxPayloadBytes: 4096})
	c := testCall("chatcmpl-big", "org_a", nil, time.Now().UTC())
	c.RequestPayload = json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	s.RecordCall(c)
	got, err := s.Call(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := gjson.ParseBytes(got.RequestPayload)
	if len(got.RequestPayload) > 4096 || !req.Get("truncated").Bool() || req.Get("original_bytes").Int() != int64(len(c.RequestPayload)) {
		t.Fatalf("stored request payload: %.200s (%d bytes)", got.RequestPayload, len(got.RequestPayload))
	}
	if !bytes.Equal(got.ResponsePayload, testCall("chatcmpl-big", "org_a", nil, time.Now()).ResponsePayload) {
		t.Fatalf("the small response payload changed: %s", got.ResponsePayload)
	}
}

// TestPrunePayloads: payloads of calls older than the cutoff become the
// pruned marker, in transactions of the given size, and the rest of each
// record stays; newer calls keep theirs; a second run visits nothing.
func TestPrunePayloads(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	orgs := []string{}
	for _, name := range []string{"a", "b"} {
		o, err := s.EnsureOrg(name)
		if err != nil {
			t.Fatal(err)
		}
		orgs = append(orgs, o.ID)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, org := range orgs {
		for i := 0; i < 25; i++ {
			s.RecordCall(testCall(fmt.Sprintf("chatcmpl-%s-%02d", org, i), org, nil, base.Add(time.Duration(i)*time.Hour)))
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	cutoff := base.Add(20 * time.Hour) // calls 0..19 are older
	n, err := s.PrunePayloads(cutoff, 3, nil)
	if err != nil || n != 40 {
		t.Fatalf("pruned %d, %v; want 40", n, err)
	}
	for _, org := range orgs {
		for i := 0; i < 25; i++ {
			c, err := s.Call(fmt.Sprintf("chatcmpl-%s-%02d", org, i))
			if err != nil {
				t.Fatal(err)
			}
			pruned := gjson.GetBytes(c.RequestPayload, "pruned").Bool() && gjson.GetBytes(c.ResponsePayload, "pruned").Bool()
			if pruned != (i < 20) {
				t.Fatalf("call %d of %s: pruned %v: %s", i, org, pruned, c.RequestPayload)
			}
			if c.PromptTokens != 12 || c.CostUSD == nil || len(c.Attempts) != 2 {
				t.Fatalf("pruning lost the record's other fields: %+v", c)
			}
			if pruned && gjson.GetBytes(c.RequestPayload, "original_bytes").Int() == 0 {
				t.Fatalf("no original size: %s", c.RequestPayload)
			}
		}
	}
	if n, err := s.PrunePayloads(cutoff, 3, nil); err != nil || n != 0 {
		t.Fatalf("second run pruned %d, %v", n, err)
	}
	if n, err := s.PrunePayloads(base.Add(100*time.Hour), 0, nil); err != nil || n != 10 {
		t.Fatalf("later cutoff pruned %d, %v; want 10", n, err)
	}
}

// TestListPagesAreBoundedInBytes: a page ends early once its records add
// up to MaxBytes, with a cursor that continues where it stopped; paging
// through still yields every call once, newest first.
func TestListPagesAreBoundedInBytes(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	s.SetRetention(Retention{MaxPayloadBytes: -1})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []string
	for i := 0; i < 30; i++ {
		c := testCall(fmt.Sprintf("chatcmpl-%02d", i), "org_a", nil, base.Add(time.Duration(i)*time.Second))
		c.RequestPayload = json.RawMessage(`{"pad":"` + strings.Repeat("p", 10_000) + `"}`)
		s.RecordCall(c)
		want = append([]string{c.ID}, want...)
	}
	const bound = 35_000 // three records of about 10.6 KB
	var got []string
	cursor := ""
	pages := 0
	for {
		page, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Limit: 200, Cursor: cursor, MaxBytes: bound}})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		body, _ := json.Marshal(page)
		if len(page.Data) == 0 || len(page.Data) > 3 || len(body) > bound+2000 {
			t.Fatalf("page %d: %d calls, %d bytes", pages, len(page.Data), len(body))
		}
		for _, c := range page.Data {
			got = append(got, c.ID)
		}
		if !page.HasMore {
			break
		}
		cursor = *page.NextCursor
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || pages != 10 {
		t.Fatalf("%d pages: %v", pages, got)
	}
	// One record larger than the bound still makes a page of one.
	page, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Limit: 5, MaxBytes: 100}})
	if err != nil || len(page.Data) != 1 || !page.HasMore {
		t.Fatalf("%d calls, has_more %v, %v", len(page.Data), page.HasMore, err)
	}
}

// countingReader counts the bytes read from it and makes them up as it
// goes, so that a test can send a huge body without holding it.
type countingReader struct {
	left, read int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.left)
	for i := range p[:n] {
		p[i] = ' '
	}
	r.left -= n
	r.read += n
	return int(n), nil
}

// TestAPIBodyLimits: a body over the API's limit is a 413 in the SPEC
// shape; one that declares its length is refused before any of it is
// read; one without is refused one byte past the limit; depth and member
// bounds are 400s.
func TestAPIBodyLimits(t *testing.T) {
	h := newAPIHarness(t)
	h.api.Limits = Limits{MaxBodyBytes: 1 << 10, JSON: jsonlimit.Limits{MaxDepth: 4, MaxMembers: 50}}
	send := func(body io.Reader, length int64) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/operations", body)
		req.ContentLength = length
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	declared := &countingReader{left: 64 << 20}
	status, body := send(declared, declared.left)
	if status != http.StatusRequestEntityTooLarge || gjson.GetBytes(body, "error.code").String() != "request_too_large" {
		t.Fatalf("declared: %d %s", status, body)
	}
	chunked := &countingReader{left: 64 << 20}
	status, body = send(io.MultiReader(strings.NewReader(`{"key":"`), chunked), -1)
	if status != http.StatusRequestEntityTooLarge || gjson.GetBytes(body, "error.type").String() != "invalid_request_error" {
		t.Fatalf("chunked: %d %s", status, body)
	}
	// The server stopped reading at once: the client got no further than
	// what the socket buffers took.
	if declared.read > 32<<20 || chunked.read > 32<<20 {
		t.Fatalf("the server read on: %d and %d bytes sent", declared.read, chunked.read)
	}
	if status, body := send(strings.NewReader(`{"key":[[[[[1]]]]]}`), -1); status != 400 || gjson.GetBytes(body, "error.code").String() != "json_too_deep" {
		t.Fatalf("deep: %d %s", status, body)
	}
	if status, body := send(strings.NewReader(`{"key":[`+strings.Repeat("1,", 60)+`1]}`), -1); status != 400 || gjson.GetBytes(body, "error.code").String() != "json_too_large" {
		t.Fatalf("wide: %d %s", status, body)
	}
	if status, body := h.call(http.MethodPost, "/operations", `{"key":"ok_op","name":"fits"}`); status != 201 {
		t.Fatalf("a body within the limits: %d %v", status, body)
	}
}

// TestPruningGivesPagesBack: pruned records leave no half-empty pages
// behind. bbolt merges the pages a delete leaves underfilled, not those a
// smaller value leaves; pruning that only put the marker kept every page
// the payloads took, and the file grew as if nothing had been pruned.
func TestPruningGivesPagesBack(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("a")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	payload := json.RawMessage(`{"content":"` + strings.Repeat("p", 3000) + `"}`)
	const n = 4000
	for i := 0; i < n; i++ {
		c := testCall(fmt.Sprintf("chatcmpl-%06d", i), org.ID, nil, base.Add(time.Duration(i)*time.Second))
		c.RequestPayload, c.ResponsePayload = payload, payload
		s.RecordCall(c)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PrunePayloads(base.Add(time.Hour*24), 0, nil); err != nil || n != 4000 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketCalls).Stats()
		if st.LeafAlloc > 3*st.LeafInuse {
			t.Errorf("after pruning, the calls' pages hold %d bytes in %d allocated", st.LeafInuse, st.LeafAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
