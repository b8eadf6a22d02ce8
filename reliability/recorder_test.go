package reliability

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeCommits records what a recorder commits, failing on demand.
type fakeCommits struct {
	mu      sync.Mutex
	batches []int
	ids     []string
	fail    int // how many of the next commits fail
	errs    []error
}

func (f *fakeCommits) commit(batch []*pendingCall) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return errors.New("disk unhappy")
	}
	f.batches = append(f.batches, len(batch))
	for _, p := range batch {
		f.ids = append(f.ids, p.id)
	}
	return nil
}

func (f *fakeCommits) onError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

func (f *fakeCommits) snapshot() (batches []int, ids []string, errs []error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.batches), slices.Clone(f.ids), slices.Clone(f.errs)
}

func TestRecorderBatchesUpToSize(t *testing.T) {
	f := &fakeCommits{}
	r := newRecorder(f.commit, f.onError, 10, time.Hour, 100)
	defer r.close()
	var want []string
	for range 25 {
		p := &pendingCall{id: NewID("call_")}
		want = append(want, p.id)
		if err := r.enqueue(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	// The delay is an hour, so only full batches and the flush commit;
	// how the calls after the first full batch split depends on when the
	// writer looks, but no batch exceeds the size.
	batches, ids, _ := f.snapshot()
	if len(batches) < 3 || batches[0] != 10 {
		t.Fatalf("batches = %v, want a full batch of 10 first and at least three", batches)
	}
	for _, n := range batches {
		if n > 10 {
			t.Fatalf("batches = %v: one is over the size of 10", batches)
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatal("calls committed out of order")
	}
	if n := r.pending.Load(); n != 0 {
		t.Fatalf("%d calls still pending after flush", n)
	}
}

func TestRecorderCommitsAfterDelay(t *testing.T) {
	f := &fakeCommits{}
	r := newRecorder(f.commit, f.onError, 1000, 10*time.Millisecond, 100)
	defer r.close()
	if err := r.enqueue(&pendingCall{id: "call_1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ids, _ := f.snapshot(); len(ids) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a lone call was never committed without a flush")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRecorderRetriesOnce(t *testing.T) {
	f := &fakeCommits{fail: 1}
	r := newRecorder(f.commit, f.onError, 10, time.Hour, 100)
	defer r.close()
	_ = r.enqueue(&pendingCall{id: "call_1"})
	if err := r.flush(); err != nil {
		t.Fatalf("flush after a retried commit: %v", err)
	}
	_, ids, errs := f.snapshot()
	if !slices.Equal(ids, []string{"call_1"}) || len(errs) != 1 {
		t.Fatalf("committed %v with errors %v; want the call once and one report", ids, errs)
	}
}

func TestRecorderReportsLostBatch(t *testing.T) {
	f := &fakeCommits{fail: 2}
	r := newRecorder(f.commit, f.onError, 10, time.Hour, 100)
	defer r.close()
	_ = r.enqueue(&pendingCall{id: "call_1"})
	if err := r.flush(); err == nil {
		t.Fatal("flush hid a lost batch")
	}
	if _, ids, errs := f.snapshot(); len(ids) != 0 || len(errs) != 2 {
		t.Fatalf("committed %v with errors %v; want nothing and two reports", ids, errs)
	}
	// The failure was reported once; the store goes on.
	_ = r.enqueue(&pendingCall{id: "call_2"})
	if err := r.flush(); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
}

func TestRecorderBackpressure(t *testing.T) {
	release := make(chan struct{})
	var committed atomic.Int64
	commit := func(batch []*pendingCall) error {
		<-release
		committed.Add(int64(len(batch)))
		return nil
	}
	r := newRecorder(commit, nil, 1, time.Hour, 2)
	// The writer takes the first call and blocks in its commit; two more
	// fill the queue; the fourth must wait rather than be dropped.
	for range 3 {
		_ = r.enqueue(&pendingCall{id: "call"})
	}
	blocked := make(chan error)
	go func() { blocked <- r.enqueue(&pendingCall{id: "call_4"}) }()
	select {
	case <-blocked:
		t.Fatal("enqueue on a full queue returned at once")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	if n := committed.Load(); n != 4 {
		t.Fatalf("committed %d calls, want 4", n)
	}
}

func TestRecorderCloseWhileRecording(t *testing.T) {
	f := &fakeCommits{}
	r := newRecorder(f.commit, f.onError, 16, time.Millisecond, 8)
	var accepted, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if err := r.enqueue(&pendingCall{id: "call"}); errors.Is(err, ErrClosed) {
					refused.Add(1)
				} else {
					accepted.Add(1)
				}
			}
		}()
	}
	time.Sleep(2 * time.Millisecond)
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	_, ids, _ := f.snapshot()
	if int64(len(ids)) != accepted.Load() {
		t.Fatalf("committed %d of %d accepted calls", len(ids), accepted.Load())
	}
	if accepted.Load()+refused.Load() != 4000 {
		t.Fatal("calls went missing between accepted and refused")
	}
	if err := r.flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("flush after close: %v, want ErrClosed", err)
	}
	r.wait()
}

func TestRecorderCloseReportsUnflushedFailure(t *testing.T) {
	f := &fakeCommits{fail: 2}
	r := newRecorder(f.commit, f.onError, 10, time.Hour, 100)
	_ = r.enqueue(&pendingCall{id: "call_1"})
	if err := r.close(); err == nil {
		t.Fatal("close hid a batch lost while draining")
	}
}
