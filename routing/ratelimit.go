package routing

import (
	"container/list"
	"math"
	"sync"
	"time"
)

// DefaultRateLimitKeys bounds the keys a RateLimiter tracks at once.
const DefaultRateLimitKeys = 100_000

// RateLimiter enforces requests per minute and tokens per minute per key
// (an API key, an org) with two token buckets each, refilled continuously
// and holding at most one minute's allowance, so a quiet key may burst up
// to its per-minute limit. It is safe for concurrent use; its zero value is
// ready, with the defaults.
//
// Tokens are only known once a call is answered: AllowRequest refuses a
// key whose token bucket is exhausted, and ChargeTokens takes a call's
// tokens afterwards, into debt if need be, so the key's next calls wait
// for it.
type RateLimiter struct {
	// MaxKeys bounds the keys tracked. Keys whose buckets have refilled
	// are dropped first, since a fresh key starts full anyway; past the
	// bound the least recently used key is forgotten, which gives it a
	// full allowance again. Default DefaultRateLimitKeys.
	MaxKeys int

	mu   sync.Mutex
	keys map[string]*list.Element
	// lru holds *limitState, most recently used first.
	lru       list.List
	lastSweep time.Time
}

type limitState struct {
	key string
	// reqs and toks are what is left in the buckets at last; toks may be
	// negative, a debt from calls that used more than was left.
	reqs, toks float64
	last       time.Time
	// rpm and tpm are the limits seen last: ChargeTokens refills the
	// request bucket at the rate it had.
	rpm, tpm int
}

// AllowRequest takes one request from key's allowance of rpm requests and
// tpm tokens per minute. It refuses, with the time until a retry would
// succeed, when the request bucket is empty or the token bucket has less
// than one token left. A limit of 0 is unlimited.
func (l *RateLimiter) AllowRequest(key string, rpm, tpm int, now time.Time) (ok bool, retryAfter time.Duration) {
	if rpm <= 0 && tpm <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(key, rpm, tpm, now)
	if rpm > 0 && s.reqs < 1 {
		retryAfter = untilOne(s.reqs, rpm)
	}
	if tpm > 0 && s.toks < 1 {
		retryAfter = max(retryAfter, untilOne(s.toks, tpm))
	}
	if retryAfter > 0 {
		return false, retryAfter
	}
	if rpm > 0 {
		s.reqs--
	}
	return true, 0
}

// ChargeTokens takes a served call's tokens from key's token bucket of tpm
// tokens per minute. The bucket may go negative. A limit of 0 is unlimited.
func (l *RateLimiter) ChargeTokens(key string, tpm int, tokens int, now time.Time) {
	if tpm <= 0 || tokens <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(key, -1, tpm, now)
	s.toks -= float64(tokens)
}

// Len returns the number of keys tracked.
func (l *RateLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// state returns key's buckets refilled up to now, creating them full; the
// caller holds mu. An rpm below 0 keeps the request limit seen last, for
// ChargeTokens, which is not told it.
func (l *RateLimiter) state(key string, rpm, tpm int, now time.Time) *limitState {
	if l.keys == nil {
		l.keys = map[string]*list.Element{}
		l.lastSweep = now
	}
	if now.Sub(l.lastSweep) >= time.Minute {
		l.sweep(now)
	}
	el, ok := l.keys[key]
	if !ok {
		rpm = max(rpm, 0)
		s := &limitState{key: key, reqs: float64(rpm), toks: float64(tpm), last: now, rpm: rpm, tpm: tpm}
		l.keys[key] = l.lru.PushFront(s)
		for l.lru.Len() > orDefault(l.MaxKeys, DefaultRateLimitKeys) {
			l.drop(l.lru.Back())
		}
		return s
	}
	l.lru.MoveToFront(el)
	s := el.Value.(*limitState)
	if rpm < 0 {
		rpm = s.rpm
	}
	s.refill(rpm, tpm, now)
	return s
}

// refill adds what the time since the last use earned at the given limits.
// A bucket that was unlimited starts full; a lowered limit caps it.
func (s *limitState) refill(rpm, tpm int, now time.Time) {
	// A clock that steps back earns nothing rather than a negative refill.
	d := max(0, now.Sub(s.last))
	if s.rpm <= 0 {
		s.reqs = float64(rpm)
	}
	if s.tpm <= 0 {
		s.toks = float64(tpm)
	}
	s.reqs = min(float64(rpm), s.reqs+earned(d, rpm))
	s.toks = min(float64(tpm), s.toks+earned(d, tpm))
	s.last, s.rpm, s.tpm = now, rpm, tpm
}

// full reports whether the buckets would be full at now, so the key's state
// equals a fresh one and can be dropped without anyone noticing.
func (s *limitState) full(now time.Time) bool {
	d := max(0, now.Sub(s.last))
	return s.reqs+earned(d, s.rpm) >= float64(s.rpm) && s.toks+earned(d, s.tpm) >= float64(s.tpm)
}

// sweep drops every key whose buckets have refilled; the caller holds mu.
// It runs at most once a minute, which keeps its cost per call constant.
func (l *RateLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for el := l.lru.Back(); el != nil; {
		prev := el.Prev()
		if el.Value.(*limitState).full(now) {
			l.drop(el)
		}
		el = prev
	}
}

// drop forgets a key; the caller holds mu.
func (l *RateLimiter) drop(el *list.Element) {
	delete(l.keys, l.lru.Remove(el).(*limitState).key)
}

// earned is what d refills at perMin per minute. Refills and retry-after
// both go through it, so a retry exactly at the retry-after sees the same
// float arithmetic that promised it.
func earned(d time.Duration, perMin int) float64 {
	return float64(d) / float64(time.Minute) * float64(perMin)
}

// untilOne is how long a bucket at level takes to hold one unit at perMin
// per minute, rounded up so a retry after it succeeds.
func untilOne(level float64, perMin int) time.Duration {
	d := time.Duration(math.Ceil((1 - level) / float64(perMin) * float64(time.Minute)))
	for level+earned(d, perMin) < 1 {
		d++
	}
	return d
}
