package routing

import (
	"sync"
	"time"
)

// Upstream health defaults.
const (
	// DefaultFailureThreshold is how many failures in a row cool a path
	// down: one failure is noise, three is an outage.
	DefaultFailureThreshold = 3
	// DefaultBaseCooldown is the first cool-down of a path.
	DefaultBaseCooldown = 5 * time.Second
	// DefaultMaxCooldown caps the doubling, so a path that recovers is
	// noticed within minutes.
	DefaultMaxCooldown = 5 * time.Minute
)

// Health tracks upstream failures per path key and cools failing paths
// down. It is the gateway's own view, per path: Caddy's passive health is
// shared per dial address across the process, which a provider's several
// models and quantizations share.
//
// A path cools down after Threshold failures in a row, for BaseCooldown,
// doubling with each cool-down in a row up to MaxCooldown. When it ends
// the path is half-open: one call may try it; success clears the record,
// failure cools it down again for twice as long. It is safe for concurrent
// use; its zero value is ready, with the defaults.
type Health struct {
	// Threshold is the count of failures in a row that cools a path down.
	// Default DefaultFailureThreshold.
	Threshold int
	// BaseCooldown is the first cool-down. Default DefaultBaseCooldown.
	BaseCooldown time.Duration
	// MaxCooldown caps the cool-down. Default DefaultMaxCooldown.
	MaxCooldown time.Duration

	mu sync.Mutex
	// paths holds failing paths only: a success deletes the record, so the
	// map stays as small as the set of paths in trouble.
	paths map[string]*pathHealth
}

type pathHealth struct {
	// fails counts failures since the last success.
	fails int
	// trips counts cool-downs in a row; the last lasted cooldown(trips).
	trips int
	// until is the end of the current cool-down.
	until time.Time
	// trialUntil is when a half-open trial that reported nothing (its
	// client went away) is given up, so the path is not closed forever.
	trialUntil time.Time
}

// Failure records a failed attempt on the path (connect error, 5xx, 429,
// timeout).
func (h *Health) Failure(pathKey string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.paths == nil {
		h.paths = map[string]*pathHealth{}
	}
	p := h.paths[pathKey]
	if p == nil {
		p = &pathHealth{}
		h.paths[pathKey] = p
	}
	if now.Before(p.until) {
		// Calls that were in flight when the path tripped: one outage, not
		// several, so the cool-down does not double for each.
		return
	}
	p.fails++
	if p.trips > 0 || p.fails >= orDefault(h.Threshold, DefaultFailureThreshold) {
		p.trips++
		p.until = now.Add(h.cooldown(p.trips))
		p.trialUntil = time.Time{}
	}
}

// Success records an answer from the path and clears its record.
func (h *Health) Success(pathKey string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.paths, pathKey)
}

// Open reports whether a call may try the path now. During a cool-down it
// may not; once it ends, the first caller is granted the half-open trial
// and the others are refused until that trial reports.
func (h *Health) Open(pathKey string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.paths[pathKey]
	switch {
	case p == nil || p.trips == 0:
		return true
	case now.Before(p.until), now.Before(p.trialUntil):
		return false
	}
	p.trialUntil = now.Add(h.cooldown(p.trips))
	return true
}

// PathState is what Health holds on a failing path.
type PathState struct {
	// Key is the path key (PathKey).
	Key string
	// Fails counts the failures since the path's last success.
	Fails int
	// CoolingUntil is when the path's cool-down ends; zero when it is not
	// cooling down.
	CoolingUntil time.Time
}

// Failing lists the paths that failed since their last success, in no
// particular order, for readiness reports and metrics; a path that is
// not listed is healthy.
func (h *Health) Failing(now time.Time) []PathState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]PathState, 0, len(h.paths))
	for key, p := range h.paths {
		ps := PathState{Key: key, Fails: p.fails}
		if now.Before(p.until) {
			ps.CoolingUntil = p.until
		}
		out = append(out, ps)
	}
	return out
}

// cooldown is the length of the n-th cool-down in a row.
func (h *Health) cooldown(n int) time.Duration {
	base, maxCool := h.BaseCooldown, h.MaxCooldown
	if base <= 0 {
		base = DefaultBaseCooldown
	}
	if maxCool <= 0 {
		maxCool = DefaultMaxCooldown
	}
	d := base
	for i := 1; i < n && d < maxCool; i++ {
		d *= 2
	}
	return min(d, maxCool)
}

// Healthy drops the candidates whose paths are cooling down, keeping the
// order of the rest, and returns the dropped ones for the caller to record.
// When every path is cooling the route is kept whole: trying a cooling path
// beats failing the call unasked. Asking grants half-open trials (see
// Open), so call it once per call, just before trying the candidates.
func (r Route) Healthy(h *Health, now time.Time) (kept Route, skipped []Candidate) {
	if h == nil || len(r.Candidates) == 0 {
		return r, nil
	}
	open := make([]Candidate, 0, len(r.Candidates))
	for _, c := range r.Candidates {
		if h.Open(PathKey(c), now) {
			open = append(open, c)
		} else {
			skipped = append(skipped, c)
		}
	}
	if len(open) == 0 {
		return r, nil
	}
	if open[0].Path != r.Candidates[0].Path {
		// The explored or remembered path is cooling: the first candidate
		// is now an ordinary one.
		r.Explored, r.Remembered = false, false
	}
	r.Candidates = open
	if open[0].Model != nil {
		r.Model = open[0].Model
	}
	return r, skipped
}
