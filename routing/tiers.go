package routing

import (
	"container/list"
	"context"
	"fmt"
	"sync"
)

// tierPriority orders the tiers for admission: realtime first.
var tierPriority = [...]string{"realtime", "standard", "batch"}

// Scheduler bounds the calls in flight per upstream provider and, when a
// provider is at its bound, admits the waiting calls by tier: realtime,
// then standard, then batch, first come first served within a tier.
// Priority is strict: under sustained realtime load batch calls wait,
// which is what batch's price buys. It is safe for concurrent use.
type Scheduler struct {
	mu     sync.Mutex
	limits map[string]int
	queues map[string]*providerQueue
}

type providerQueue struct {
	active int
	// waiting holds *waiter per tier, in tierPriority order.
	waiting [len(tierPriority)]list.List
}

type waiter struct {
	// ready is closed when the waiter is handed a slot.
	ready chan struct{}
	// admitted is set, under the scheduler's lock, with the hand-off, so a
	// waiter whose context ends at the same moment gives the slot back.
	admitted bool
}

// NewScheduler returns a scheduler with the given bounds on concurrent
// calls per provider; a provider left out, or bound to 0, is unlimited.
func NewScheduler(limits map[string]int) *Scheduler {
	s := &Scheduler{limits: map[string]int{}, queues: map[string]*providerQueue{}}
	for p, n := range limits {
		if n > 0 {
			s.limits[p] = n
			s.queues[p] = &providerQueue{}
		}
	}
	return s
}

// Acquire waits for a slot on the provider for a call of the given tier
// and returns the function that gives it back; call release exactly once,
// when the upstream call is over (further calls do nothing). When ctx ends
// first, the call leaves the queue and Acquire returns ctx's error.
func (s *Scheduler) Acquire(ctx context.Context, provider, tier string) (release func(), err error) {
	prio := -1
	for i, t := range tierPriority {
		if t == tier {
			prio = i
		}
	}
	if prio < 0 {
		return nil, fmt.Errorf("scheduling on %q: unknown tier %q", provider, tier)
	}
	limit := s.limits[provider]
	if limit == 0 {
		return func() {}, nil
	}
	q := s.queues[provider]
	s.mu.Lock()
	if q.active < limit && q.waiters() == 0 {
		q.active++
		s.mu.Unlock()
		return s.releaser(q), nil
	}
	w := &waiter{ready: make(chan struct{})}
	el := q.waiting[prio].PushBack(w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		return s.releaser(q), nil
	case <-ctx.Done():
		s.mu.Lock()
		if w.admitted {
			// Handed a slot as the context ended: pass it on.
			s.handOff(q)
		} else {
			q.waiting[prio].Remove(el)
		}
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// releaser returns the release function of one held slot.
func (s *Scheduler) releaser(q *providerQueue) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.handOff(q)
			s.mu.Unlock()
		})
	}
}

// handOff gives a freed slot to the first waiter by priority, or frees it;
// the caller holds mu.
func (s *Scheduler) handOff(q *providerQueue) {
	for i := range q.waiting {
		if el := q.waiting[i].Front(); el != nil {
			w := q.waiting[i].Remove(el).(*waiter)
			w.admitted = true
			close(w.ready)
			return
		}
	}
	q.active--
}

// waiters counts the calls waiting on the provider.
func (q *providerQueue) waiters() int {
	n := 0
	for i := range q.waiting {
		n += q.waiting[i].Len()
	}
	return n
}

// Waiting returns the number of calls waiting for a slot on the provider,
// for metrics.
func (s *Scheduler) Waiting(provider string) int {
	q := s.queues[provider]
	if q == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return q.waiters()
}
