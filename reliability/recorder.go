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
	DefaultBatchSize = 256
	// DefaultBatchDelay is the longest a queued call waits for others to
	// share its commit.
	DefaultBatchDelay = 10 * time.Millisecond
	// DefaultQueueSize is how many calls may wait for the writer before
	// RecordCall starts to block.
	DefaultQueueSize = 4096
)

// commitRetryDelay is the pause before a failed commit is tried again, long
// enough for a transient condition (a full disk being cleaned, a slow
// device) to clear, short enough that the queue does not fill meanwhile.
const commitRetryDelay = 50 * time.Millisecond

// recorder writes calls with group commit: callers hand calls to a queue and
// return at once, and a single writer goroutine commits them in batches of
// up to size calls, each batch waiting at most delay for more calls to
// arrive. One fsync then covers a whole batch instead of a single call,
// which is what lets recording keep up with the call path. BoltStore's doc
// states what a crash can lose.
type recorder struct {
	commit  func([]*pendingCall) error
	onError func(error)
	size    int
	delay   time.Duration

	// mu makes closing the queue and sending on it exclusive: senders hold
	// the read lock, so close can never close the channel under a send.
	mu     sync.RWMutex
	closed bool
	queue  chan recorderMsg
	done   chan struct{}

	// pending counts calls queued and not yet committed (or dropped), so
	// that readers only pay for a barrier when there is something to wait
	// for.
	pending atomic.Int64
	// closeErr is the last commit failure not yet reported by a barrier;
	// written by the writer before done is closed.
	closeErr error
}

// recorderMsg is either a call to commit or a barrier to acknowledge.
type recorderMsg struct {
	call    *pendingCall
	barrier chan error
}

// newRecorder starts the writer goroutine; close stops it.
func newRecorder(commit func([]*pendingCall) error, onError func(error), size int, delay time.Duration, queue int) *recorder {
	r := &recorder{
		commit:  commit,
		onError: onError,
		size:    size,
		delay:   delay,
		queue:   make(chan recorderMsg, queue),
		done:    make(chan struct{}),
	}
	go r.run()
	return r
}

// enqueue queues one call. It blocks only while the queue is full, which
// slows callers down to the disk's pace instead of losing calls.
func (r *recorder) enqueue(c *pendingCall) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	r.pending.Add(1)
	r.queue <- recorderMsg{call: c}
	return nil
}

// flush returns once every call queued before it is committed, with the
// first commit failure since the previous flush.
func (r *recorder) flush() error {
	ack := make(chan error, 1)
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		return ErrClosed
	}
	r.queue <- recorderMsg{barrier: ack}
	r.mu.RUnlock()
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
	if !r.closed {
		r.closed = true
		close(r.queue)
	}
	r.mu.Unlock()
	<-r.done
	return r.closeErr
}

// run is the writer: it owns the batch and is the only goroutine that
// commits calls.
func (r *recorder) run() {
	defer close(r.done)
	var (
		batch   []*pendingCall
		acks    []chan error
		failure error
		open    = true
		timer   = time.NewTimer(r.delay)
	)
	timer.Stop()
	for open {
		msg, ok := <-r.queue
		if !ok {
			break
		}
		if msg.barrier != nil {
			acks = append(acks, msg.barrier)
		} else {
			batch = append(batch, msg.call)
			timer.Reset(r.delay)
		collect:
			for len(batch) < r.size {
				select {
				case msg, ok := <-r.queue:
					switch {
					case !ok:
						open = false
						break collect
					case msg.barrier != nil:
						// A waiting reader is worth more than a fuller
						// batch: commit now.
						acks = append(acks, msg.barrier)
						break collect
					}
					batch = append(batch, msg.call)
				case <-timer.C:
					break collect
				}
			}
			timer.Stop()
		}
		if len(batch) > 0 {
			if err := r.write(batch); err != nil && failure == nil {
				failure = err
			}
			r.pending.Add(-int64(len(batch)))
			clear(batch)
			batch = batch[:0]
		}
		for _, ack := range acks {
			ack <- failure
		}
		if len(acks) > 0 {
			failure = nil
			clear(acks)
			acks = acks[:0]
		}
	}
	r.closeErr = failure
}

// write commits one batch, trying a second time before giving it up.
func (r *recorder) write(batch []*pendingCall) error {
	err := r.commit(batch)
	if err == nil {
		return nil
	}
	r.report(fmt.Errorf("commit %d calls, retrying: %w", len(batch), err))
	time.Sleep(commitRetryDelay)
	if err = r.commit(batch); err == nil {
		return nil
	}
	err = fmt.Errorf("commit %d calls failed twice, calls lost: %w", len(batch), err)
	r.report(err)
	return err
}

// report hands an error to the owner's callback, if any.
func (r *recorder) report(err error) {
	if r.onError != nil {
		r.onError(err)
	}
}
