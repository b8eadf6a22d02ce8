package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// errorLog collects what a store reports to OnError.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

func ptr[T any](v T) *T { return &v }

// testCall is a call with every field set, made at the given time.
func testCall(id, orgID string, op *string, at time.Time) *Call {
	return &Call{
		ID:               id,
		OrgID:            orgID,
		OperationID:      op,
		Model:            "router-1",
		ModelVersion:     "demo/echo-1",
		RequestPayload:   json.RawMessage(`{"model":"router-1","messages":[{"role":"user","content":"hi"}]}`),
		ResponsePayload:  json.RawMessage(`{"id":"` + id + `","object":"chat.completion"}`),
		PromptTokens:     12,
		CompletionTokens: 7,
		LatencyMs:        42,
		CreatedAt:        at,
		Status:           CallSucceeded,
		Endpoint:         EndpointChatCompletions,
		Provider:         "demo",
		Tier:             "standard",
		CostUSD:          ptr(0.0012),
		UpstreamCostUSD:  ptr(0.001),
		Delivery:         json.RawMessage(`{"tier":"standard","served_by":"provider"}`),
		Attempts: []Attempt{
			{Provider: "openai", UpstreamModel: "gpt-x", Status: 503, Error: "upstream unavailable", LatencyMs: 10},
			{Provider: "demo", UpstreamModel: "echo-1", Status: 200, LatencyMs: 30},
		},
	}
}

func TestRecordCallConcurrentThenReadable(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	const writers, perWriter = 10, 100
	ids := make([][]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				c := testCall(NewID("chatcmpl-"), fmt.Sprintf("org_%d", w%3), nil, time.Now().UTC())
				s.RecordCall(c)
				ids[w] = append(ids[w], c.ID)
			}
		}()
	}
	wg.Wait()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for w, list := range ids {
		for _, id := range list {
			c, err := s.Call(id)
			if err != nil {
				t.Fatal(err)
			}
			if c.OrgID != fmt.Sprintf("org_%d", w%3) || c.PromptTokens != 12 || len(c.Attempts) != 2 {
				t.Fatalf("call %s read back as %+v", id, c)
			}
			total++
		}
	}
	if total != writers*perWriter {
		t.Fatalf("read %d calls, want %d", total, writers*perWriter)
	}
}

func TestRecordCallRoundTrip(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	want := testCall("chatcmpl-1", "org_a", ptr("op_1"), time.Date(2025, 5, 1, 12, 0, 0, 123456789, time.UTC))
	s.RecordCall(want)
	got, err := s.Call(want.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("round trip changed the call:\n got %s\nwant %s", gotJSON, wantJSON)
	}
}

func TestCallJSONHasSpecFields(t *testing.T) {
	data, err := json.Marshal(testCall("chatcmpl-1", "org_a", nil, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"id", "object", "org_id", "operation_id", "model", "model_version",
		"request_payload", "response_payload", "prompt_tokens", "completion_tokens", "latency_ms", "created_at"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("call JSON lacks SPEC field %q", name)
		}
	}
	if string(fields["operation_id"]) != "null" {
		t.Errorf("operation_id of an untagged call = %s, want null", fields["operation_id"])
	}
}

func TestRecordCallFillsDefaults(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	c := &Call{OrgID: "org_a", Model: "demo/echo-1", Endpoint: EndpointEmbeddings}
	before := time.Now()
	s.RecordCall(c)
	if !strings.HasPrefix(c.ID, "call_") || c.Object != ObjectCall || c.CreatedAt.Before(before.Add(-time.Second)) {
		t.Fatalf("RecordCall left %+v", c)
	}
	if _, err := s.Call(c.ID); err != nil {
		t.Fatal(err)
	}
}

func TestCallReadableBeforeBatchDelay(t *testing.T) {
	// A client that was just answered must find its call even though the
	// writer would otherwise wait an hour for a fuller batch.
	s, _ := openTestStore(t, BoltOptions{BatchDelay: time.Hour, BatchSize: 1 << 20})
	c := testCall("chatcmpl-now", "org_a", ptr("op_1"), time.Now().UTC())
	s.RecordCall(c)
	if _, err := s.Call(c.ID); err != nil {
		t.Fatalf("Call right after RecordCall: %v", err)
	}
	s.RecordCall(testCall("chatcmpl-next", "org_a", ptr("op_1"), time.Now().UTC()))
	page, err := s.ListCalls("org_a", CallQuery{OperationID: "op_1"})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("ListCalls right after RecordCall = %d calls, %v; want 2", len(page.Data), err)
	}
}

func TestCallNotFound(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	if _, err := s.Call("chatcmpl-missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Call of a missing id: %v, want ErrNotFound", err)
	}
}

// recordSeries records n calls of org made one millisecond apart, cycling
// through the id prefixes of the endpoints, and returns their ids newest
// first.
func recordSeries(t *testing.T, s *BoltStore, org string, op func(i int) *string, n int) []string {
	t.Helper()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	prefixes := []string{"chatcmpl-", "msg_", "resp_", "call_"}
	ids := make([]string, n)
	for i := range n {
		c := testCall(NewID(prefixes[i%len(prefixes)]), org, op(i), base.Add(time.Duration(i)*time.Millisecond))
		s.RecordCall(c)
		ids[n-1-i] = c.ID
	}
	return ids
}

// listAll pages through ListCalls and returns the ids in the order seen.
func listAll(t *testing.T, s *BoltStore, org string, q CallQuery) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		page, err := s.ListCalls(org, q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Limit != 0 && len(page.Data) > q.Limit {
			t.Fatalf("page of %d calls exceeds limit %d", len(page.Data), q.Limit)
		}
		for _, c := range page.Data {
			ids = append(ids, c.ID)
		}
		if !page.HasMore {
			if page.NextCursor != nil {
				t.Fatal("last page carries a cursor")
			}
			return ids
		}
		if page.NextCursor == nil || len(page.Data) == 0 {
			t.Fatal("a page with more to come has no cursor or no calls")
		}
		q.Cursor = *page.NextCursor
	}
}

func TestListCallsPagesNewestFirst(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	want := recordSeries(t, s, "org_a", func(int) *string { return nil }, 125)
	for _, limit := range []int{1, 7, 50, 125, 200} {
		got := listAll(t, s, "org_a", CallQuery{PageQuery: PageQuery{Limit: limit}})
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: paging gave %d calls out of order or twice, want all %d newest first", limit, len(got), len(want))
		}
	}
	first, err := s.ListCalls("org_a", CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Data) != DefaultPageLimit || !first.HasMore || first.Object != ObjectList {
		t.Fatalf("default page: %d calls, has_more %v, object %q", len(first.Data), first.HasMore, first.Object)
	}
	exact, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Limit: 125}})
	if err != nil || exact.HasMore || exact.NextCursor != nil {
		t.Fatalf("a page holding every call claims more: %v, %v", exact.HasMore, err)
	}
}

func TestListCallsSeesCallsAddedWhilePaging(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	old := recordSeries(t, s, "org_a", func(int) *string { return nil }, 10)
	page, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Limit: 4}})
	if err != nil {
		t.Fatal(err)
	}
	// A newer call must not shift the pages that follow.
	s.RecordCall(testCall(NewID("chatcmpl-"), "org_a", nil, time.Now().UTC()))
	rest := listAll(t, s, "org_a", CallQuery{PageQuery: PageQuery{Limit: 4, Cursor: *page.NextCursor}})
	if !slices.Equal(rest, old[4:]) {
		t.Fatalf("pages after the cursor = %v, want %v", rest, old[4:])
	}
}

func TestListCallsOperationFilter(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	ops := []*string{ptr("op_a"), ptr("op_b"), nil, ptr("op_a\x00x")}
	all := recordSeries(t, s, "org_a", func(i int) *string { return ops[i%len(ops)] }, 40)
	byOp := map[string][]string{}
	for i, id := range all {
		// all is newest first: index i was recorded as call 39-i.
		if op := ops[(39-i)%len(ops)]; op != nil {
			byOp[*op] = append(byOp[*op], id)
		}
	}
	for op, want := range byOp {
		got := listAll(t, s, "org_a", CallQuery{OperationID: op, PageQuery: PageQuery{Limit: 3}})
		if !slices.Equal(got, want) {
			t.Fatalf("operation %q: got %v, want %v", op, got, want)
		}
	}
	if got := listAll(t, s, "org_a", CallQuery{OperationID: "op_c"}); len(got) != 0 {
		t.Fatalf("unknown operation lists %d calls", len(got))
	}
}

func TestListCallsOrgIsolation(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a := recordSeries(t, s, "org_a", func(int) *string { return ptr("op_shared") }, 12)
	b := recordSeries(t, s, "org_b", func(int) *string { return ptr("op_shared") }, 5)
	// "org_a\x00x" starts with org_a's prefix bytes; it must stay apart.
	recordSeries(t, s, "org_a\x00x", func(int) *string { return ptr("op_shared") }, 3)
	if got := listAll(t, s, "org_a", CallQuery{}); !slices.Equal(got, a) {
		t.Fatalf("org_a lists %d calls, want its own %d", len(got), len(a))
	}
	if got := listAll(t, s, "org_b", CallQuery{OperationID: "op_shared"}); !slices.Equal(got, b) {
		t.Fatalf("org_b lists %d calls of op_shared, want its own %d", len(got), len(b))
	}
	if got := listAll(t, s, "org_c", CallQuery{}); len(got) != 0 {
		t.Fatalf("an org with no calls lists %d", len(got))
	}
}

func TestListCallsRejectsBadPaging(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	recordSeries(t, s, "org_a", func(int) *string { return nil }, 3)
	for _, limit := range []int{-1, 201} {
		if _, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Limit: limit}}); !errors.Is(err, ErrBadLimit) {
			t.Errorf("limit %d: %v, want ErrBadLimit", limit, err)
		}
	}
	for _, cursor := range []string{"not base64!", "AAAA", strings.Repeat("A", 4000)} {
		if _, err := s.ListCalls("org_a", CallQuery{PageQuery: PageQuery{Cursor: cursor}}); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %.20q: %v, want ErrBadCursor", cursor, err)
		}
	}
}

func TestRecordCallReplacesSameID(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	first := testCall("chatcmpl-batch", "org_a", ptr("op_old"), at)
	first.Status = CallFailed
	s.RecordCall(first)
	s.RecordCall(testCall("chatcmpl-other", "org_a", nil, at.Add(time.Second)))
	second := testCall("chatcmpl-batch", "org_a", ptr("op_new"), at.Add(time.Minute))
	s.RecordCall(second)

	got, err := s.Call("chatcmpl-batch")
	if err != nil || got.Status != CallSucceeded {
		t.Fatalf("Call after replace = %+v, %v", got, err)
	}
	if ids := listAll(t, s, "org_a", CallQuery{}); !slices.Equal(ids, []string{"chatcmpl-batch", "chatcmpl-other"}) {
		t.Fatalf("listing after replace = %v", ids)
	}
	if ids := listAll(t, s, "org_a", CallQuery{OperationID: "op_old"}); len(ids) != 0 {
		t.Fatalf("old operation still lists %v", ids)
	}
	if ids := listAll(t, s, "org_a", CallQuery{OperationID: "op_new"}); !slices.Equal(ids, []string{"chatcmpl-batch"}) {
		t.Fatalf("new operation lists %v", ids)
	}
}

func TestRecordCallKeepsInvalidPayloadAsString(t *testing.T) {
	log := &errorLog{}
	s, _ := openTestStore(t, BoltOptions{OnError: log.add})
	c := testCall("chatcmpl-html", "org_a", nil, time.Now().UTC())
	c.Status = CallFailed
	c.ResponsePayload = json.RawMessage("<html>502 Bad Gateway</html>")
	s.RecordCall(c)
	got, err := s.Call(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if err := json.Unmarshal(got.ResponsePayload, &text); err != nil || text != "<html>502 Bad Gateway</html>" {
		t.Fatalf("response_payload stored as %s", got.ResponsePayload)
	}
	if string(got.RequestPayload) != string(c.RequestPayload) {
		t.Fatalf("a valid payload was changed: %s", got.RequestPayload)
	}
	if len(log.all()) != 1 {
		t.Fatalf("reports = %v, want one", log.all())
	}
}

func TestRecordCallDropsUnstorable(t *testing.T) {
	log := &errorLog{}
	s, _ := openTestStore(t, BoltOptions{OnError: log.add})
	s.RecordCall(nil)
	s.RecordCall(&Call{ID: "chatcmpl-orphan"})
	s.RecordCall(&Call{ID: strings.Repeat("x", 300), OrgID: "org_a"})
	s.RecordCall(&Call{ID: "chatcmpl-longop", OrgID: "org_a", OperationID: ptr(strings.Repeat("o", 2000))})
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(log.all()); n != 4 {
		t.Fatalf("%d reports, want 4: %v", n, log.all())
	}
	if _, err := s.Call("chatcmpl-orphan"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a call without org was stored: %v", err)
	}
}

func TestCloseFlushesQueuedCalls(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{BatchDelay: time.Hour, BatchSize: 1 << 20})
	want := recordSeries(t, s, "org_a", func(int) *string { return ptr("op_1") }, 500)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := reopenTestStore(t, path, BoltOptions{})
	if got := listAll(t, s2, "org_a", CallQuery{OperationID: "op_1", PageQuery: PageQuery{Limit: 200}}); !slices.Equal(got, want) {
		t.Fatalf("after reopen %d calls listed, want %d", len(got), len(want))
	}
}

func TestRecordCallAfterClose(t *testing.T) {
	log := &errorLog{}
	s, _ := openTestStore(t, BoltOptions{OnError: log.add})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.RecordCall(testCall("chatcmpl-late", "org_a", nil, time.Now()))
	errs := log.all()
	if len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		t.Fatalf("RecordCall after Close reported %v, want ErrClosed", errs)
	}
	if err := s.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Call("chatcmpl-late"); err == nil {
		t.Fatal("Call on a closed store succeeded")
	}
}

func BenchmarkRecordCall(b *testing.B) {
	s, _ := openTestStore(b, BoltOptions{})
	org, err := s.EnsureOrg("bench")
	if err != nil {
		b.Fatal(err)
	}
	payload := json.RawMessage(`{"model":"router-1","messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 80) + `"}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := testCall(NewID("chatcmpl-"), org.ID, ptr("op_bench"), time.Now().UTC())
			c.RequestPayload = payload
			c.ChargeUSD = 0.0012
			s.RecordCall(c)
		}
	})
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	reportCPUPerOp(b, cpu)
}
