package reliability

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the group commit.
const (
	// DefaultBatchSize is the most calls committed in one transaction.
	DefaultBatchSize = 1024
	// DefaultBatchDelay is the longest a queued call waits for others to
	// share its commit.
	DefaultBatchDelay = 50 * time.Millisecond
	// DefaultQueueSize is how many calls may wait for the writer before
	// RecordCall starts to block.
	DefaultQueueSize = 4096
)

// commitRetryDelay is the pause before a failed commit is tried again, long
// enough for a transient condition (a full disk being cleaned, a slow
// device) to clear, short enough that the queue does not fill meanwhile.
const commitRetryDelay = 50 * time.Millisecond

// recorder writes calls with group commit: callers append calls to a queue
// and return at once, and a single writer goroutine commits them in batches
// of up to size calls. The writer wakes when the first call of a batch
// arrives and sleeps until that call has waited delay (or a batch is full,
// or a reader waits) before it commits. One fsync then covers a whole batch
// instead of a single call, and one wake-up serves a whole batch instead of
// every call, which is what lets recording keep up with the call path.
// BoltStore's doc states what a crash can lose.
type recorder struct {
	commit  func([]*pendingCall) error
	onError func(error)
	// gaveUp, when set, is told of each batch the writer could not
	// commit and dropped; set it before the first enqueue.
	gaveUp func([]*pendingCall)
	// onCommit, when set, is told of every commit (see
	// BoltOptions.OnCommit); set it before the first enqueue.
	onCommit func(calls int, took time.Duration, err error)
	size     int
	delay    time.Duration
	limit    int // most calls queued before enqueue blocks

	mu sync.Mutex
	// space is signalled when the writer takes calls off the queue.
	space sync.Cond
	calls []*pendingCall
	// queued counts every call ever queued; committed (owned by the
	// writer) every call ever committed or given up. A barrier waits for
	// committed to reach queued as it was when the barrier was set.
	queued   uint64
	barriers []barrier
	// first is when the oldest queued call arrived.
	first  time.Time
	closed bool
	// wake tells the writer that there is work: a first call, a full
	// batch, a barrier or close. One token is enough, so senders never
	// block on it.
	wake chan struct{}
	done chan struct{}

	// pending counts calls queued and not yet committed (or dropped), so
	// that readers only pay for a barrier when there is something to wait
	// for.
	pending atomic.Int64
	// closeErr is the last commit failure not yet reported by a barrier;
	// written by the writer before done is closed.
	closeErr error
}

// barrier is a flush waiting for the calls queued before it.
type barrier struct {
	ack  chan error
	upTo uint64
}

// newRecorder starts the writer goroutine; close stops it.
func newRecorder(commit func([]*pendingCall) error, onError func(error), size int, delay time.Duration, queue int) *recorder {
	r := &recorder{
		commit:  commit,
		onError: onError,
		size:    max(size, 1),
		delay:   delay,
		limit:   max(queue, 1),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	r.space.L = &r.mu
	go r.run()
	return r
}

// signal hands the writer a wake-up token unless one is waiting already.
func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// enqueue queues one call. It blocks only while the queue is full, which
// slows callers down to the disk's pace instead of losing calls.
func (r *recorder) enqueue(c *pendingCall) error {
	r.mu.Lock()
	for len(r.calls) >= r.limit && !r.closed {
		r.space.Wait()
	}
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.pending.Add(1)
	r.calls = append(r.calls, c)
	r.queued++
	n := len(r.calls)
	if n == 1 {
		r.first = time.Now()
	}
	r.mu.Unlock()
	// The writer needs to hear of the first call, to start its clock, and
	// of a full batch, to commit early; the calls between ride along.
	if n == 1 || n == r.size {
		r.signal()
	}
	return nil
}

// flush returns once every call queued before it is committed, with the
// first commit failure since the previous flush.
func (r *recorder) flush() error {
	ack := make(chan error, 1)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.barriers = append(r.barriers, barrier{ack: ack, upTo: r.queued})
	r.mu.Unlock()
	r.signal()
	return <-ack
}

// wait is flush for readers: it skips the barrier when nothing is pending,
// and ignores commit failures, which were reported already and only mean
// that the reader will not find the lost calls.
func (r *recorder) wait() {
	if r.pending.Load() == 0 {
		return
	}
	_ = r.flush()
}

// close stops accepting calls, commits everything queued and stops the
// writer. It returns the last commit failure no flush has reported.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.space.Broadcast()
	r.mu.Unlock()
	r.signal()
	<-r.done
	return r.closeErr
}

// run is the writer: it is the only goroutine that commits calls.
func (r *recorder) run() {
	defer close(r.done)
	var (
		batch     []*pendingCall
		committed uint64
		failure   error
		timer     = time.NewTimer(time.Hour)
	)
	timer.Stop()
	r.mu.Lock()
	for {
		for len(r.calls) == 0 && len(r.barriers) == 0 && !r.closed {
			r.mu.Unlock()
			<-r.wake
			r.mu.Lock()
		}
		// Let the oldest call wait out its delay unless something asks
		// for a commit now. A token that arrives meanwhile is a full
		// batch, a barrier or close: look again.
		for len(r.calls) > 0 && len(r.calls) < r.size && len(r.barriers) == 0 && !r.closed {
			left := r.delay - time.Since(r.first)
			if left <= 0 {
				break
			}
			r.mu.Unlock()
			timer.Reset(left)
			select {
			case <-timer.C:
			case <-r.wake:
				timer.Stop()
			}
			r.mu.Lock()
		}
		n := min(len(r.calls), r.size)
		batch = append(batch[:0], r.calls[:n]...)
		rest := copy(r.calls, r.calls[n:])
		clear(r.calls[rest:])
		r.calls = r.calls[:rest]
		if rest > 0 {
			// The calls left behind have waited through this commit:
			// they go next, without a delay of their own.
			r.first = time.Time{}
		}
		r.space.Broadcast()
		r.mu.Unlock()

		if n > 0 {
			if err := r.write(batch); err != nil && failure == nil {
				failure = err
			}
			committed += uint64(n)
			r.pending.Add(-int64(n))
			clear(batch)
		}

		r.mu.Lock()
		kept := r.barriers[:0]
		acked := false
		for _, b := range r.barriers {
			if b.upTo <= committed {
				b.ack <- failure
				acked = true
			} else {
				kept = append(kept, b)
			}
		}
		clear(r.barriers[len(kept):])
		r.barriers = kept
		if acked {
			failure = nil
		}
		if r.closed && len(r.calls) == 0 {
			r.closeErr = failure
			for _, b := range r.barriers {
				b.ack <- ErrClosed
			}
			r.mu.Unlock()
			return
		}
	}
}

// write commits one batch, trying a second time before giving it up.
func (r *recorder) write(batch []*pendingCall) error {
	err := r.timedCommit(batch)
	if err == nil {
		return nil
	}
	r.report(fmt.Errorf("commit %d calls, retrying: %w", len(batch), err))
	time.Sleep(commitRetryDelay)
	if err = r.timedCommit(batch); err == nil {
		return nil
	}
	err = fmt.Errorf("commit %d calls failed twice, calls lost: %w", len(batch), err)
	r.report(err)
	if r.gaveUp != nil {
		r.gaveUp(batch)
	}
	return err
}

// timedCommit is commit, told to onCommit with its duration.
func (r *recorder) timedCommit(batch []*pendingCall) error {
	if r.onCommit == nil {
		return r.commit(batch)
	}
	t0 := time.Now()
	err := r.commit(batch)
	r.onCommit(len(batch), time.Since(t0), err)
	return err
}

// report hands an error to the owner's callback, if any.
func (r *recorder) report(err error) {
	if r.onError != nil {
		r.onError(err)
	}
}
