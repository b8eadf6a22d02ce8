package reliability

import (
	"testing"
)

func TestBatchQueueSurvivesReopen(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("batcher")
	c := &Call{ID: "chatcmpl-b1", OrgID: org.ID, Model: "m", Endpoint: EndpointChatCompletions, RequestPayload: []byte(`{"a":1}`), ResponsePayload: []byte(`null`)}
	if err := s.EnqueueBatch(c, BatchJob{Endpoint: EndpointChatCompletions, Body: []byte(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Call("chatcmpl-b1")
	if err != nil || got.Status != CallQueued {
		t.Fatalf("queued record: %+v %v", got, err)
	}
	jobs, err := s.ClaimBatch(10)
	if err != nil || len(jobs) != 1 || jobs[0].CallID != "chatcmpl-b1" || string(jobs[0].Body) != `{"a":1}` {
		t.Fatalf("claim: %+v %v", jobs, err)
	}
	if again, _ := s.ClaimBatch(10); len(again) != 0 {
		t.Fatalf("claimed twice: %+v", again)
	}
	s.ReleaseBatch("chatcmpl-b1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.BatchQueueLen() != 1 {
		t.Fatalf("queue after reopen: %d", s2.BatchQueueLen())
	}
	jobs, _ = s2.ClaimBatch(10)
	if len(jobs) != 1 {
		t.Fatalf("jobs after reopen: %+v", jobs)
	}
	if err := s2.DoneBatch("chatcmpl-b1"); err != nil || s2.BatchQueueLen() != 0 {
		t.Fatalf("done: %v %d", err, s2.BatchQueueLen())
	}
}
