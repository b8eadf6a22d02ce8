package routing

import (
	"cmp"
	"container/list"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Gate is one ship gate of an operation: an evaluator and the score its
// results must reach.
type Gate struct {
	// EvaluatorID is the evaluator whose scores the gate reads.
	EvaluatorID string
	// MinScore is the score the path must reach, between 0 and 1.
	MinScore float64
}

// Verdict is what the evidence says of a path for an operation's gates.
type Verdict int

// Verdicts.
const (
	// Unknown: some gate lacks samples, or its confidence interval still
	// straddles the gate's min_score. Routing may explore the path.
	Unknown Verdict = iota
	// Pass: for every gate, the lower confidence bound of the mean score
	// reaches min_score. Routing may take the path.
	Pass
	// Fail: for some gate, the upper confidence bound of the mean score is
	// below min_score. Routing neither takes nor explores the path.
	Fail
)

// String returns "unknown", "pass" or "fail".
func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "unknown"
}

// Evidence defaults.
const (
	// DefaultZ is the one-sided 95% normal quantile: a path passes when it
	// is 95% sure to meet the gate, not when three lucky calls did.
	DefaultZ = 1.64
	// DefaultMinSamples is the fewest scores a gate is judged on: below it
	// the normal approximation of the mean is not to be trusted.
	DefaultMinSamples = 20
	// DefaultWindow is the sample count at which old evidence is halved.
	DefaultWindow = 1000
	// DefaultMaxExchanges bounds the exchange memory.
	DefaultMaxExchanges = 100_000
)

// Evidence is the in-memory record of eval-pass scores per (operation,
// path, evaluator) and of the exchange memory. It is safe for concurrent
// use; its zero value is ready, with the defaults. Set the configuration
// fields before first use. Snapshot and Restore let the caller persist it.
type Evidence struct {
	// Z is the normal quantile of the one-sided confidence bounds on a
	// path's mean score. Default DefaultZ.
	Z float64
	// MinSamples is the fewest scores per gate before a verdict other than
	// Unknown. Default DefaultMinSamples.
	MinSamples int
	// Window is the sample count at which a series' counts and sums are
	// halved, so old evidence fades and a path whose upstream changes is
	// judged again on recent calls. Default DefaultWindow.
	Window int
	// MaxExchanges bounds the exchange memory; the least recently used
	// entry goes first. Default DefaultMaxExchanges.
	MaxExchanges int

	mu     sync.RWMutex
	scores map[scoreKey]*scoreStats

	xmu       sync.Mutex
	exchanges map[exchangeKey]*list.Element
	// lru holds *exchangeEntry, most recently used first.
	lru list.List
}

type scoreKey struct{ operation, path, evaluator string }

// scoreStats are Welford's running mean and sum of squared deviations: a
// verdict needs the mean and the variance only, equal scores give exactly
// zero variance (sums of squares would leave float noise that flips a
// verdict at the threshold), and halving n, m2 and passes at the window
// keeps mean and variance while old evidence weighs less.
type scoreStats struct{ n, mean, m2, passes float64 }

type exchangeKey struct{ prompt, operation string }

type exchangeEntry struct {
	key  exchangeKey
	path string
}

// Add records one eval-pass result: the score an evaluator gave a call of
// the operation served by the path, and whether it passed. A score that is
// not a finite number is ignored.
func (e *Evidence) Add(operationID, pathKey, evaluatorID string, score float64, passed bool) {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return
	}
	window := float64(orDefault(e.Window, DefaultWindow))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.scores == nil {
		e.scores = map[scoreKey]*scoreStats{}
	}
	k := scoreKey{operationID, pathKey, evaluatorID}
	s := e.scores[k]
	if s == nil {
		s = &scoreStats{}
		e.scores[k] = s
	}
	if s.n+1 > window {
		s.n, s.m2, s.passes = s.n/2, s.m2/2, s.passes/2
	}
	s.n++
	d := score - s.mean
	s.mean += d / s.n
	s.m2 += d * (score - s.mean)
	if passed {
		s.passes++
	}
}

// Verdict judges the path for the operation's gates. No gate means no
// evidence: Unknown, never a vacuous Pass. A nil Evidence knows nothing.
func (e *Evidence) Verdict(operationID, pathKey string, gates []Gate) Verdict {
	if e == nil || len(gates) == 0 {
		return Unknown
	}
	z := e.Z
	if z <= 0 {
		z = DefaultZ
	}
	minN := float64(orDefault(e.MinSamples, DefaultMinSamples))
	unknown := false
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, g := range gates {
		s := e.scores[scoreKey{operationID, pathKey, g.EvaluatorID}]
		if s == nil || s.n < minN || s.n < 2 {
			unknown = true
			continue
		}
		mean, half := s.bound(z)
		switch {
		case mean+half < g.MinScore:
			return Fail
		case mean-half < g.MinScore:
			unknown = true
		}
	}
	if unknown {
		return Unknown
	}
	return Pass
}

// bound returns the mean score and the half-width z·s/√n of its
// confidence interval.
func (s *scoreStats) bound(z float64) (mean, half float64) {
	variance := max(0, s.m2/(s.n-1))
	return s.mean, z * math.Sqrt(variance/s.n)
}

// ScoreStats summarise the scores of one (operation, path, evaluator), for
// operators asking why a path is or is not taken.
type ScoreStats struct {
	// Samples is the weight of evidence: the count of scores, old ones
	// counting less once the window was reached.
	Samples float64
	// Mean is the mean score; 0 with no samples.
	Mean float64
	// Lower and Upper are the one-sided confidence bounds on the mean
	// that Verdict compares with min_score.
	Lower, Upper float64
	// PassRate is the share of results the evaluator marked passed.
	PassRate float64
}

// Stats returns the summary of one series; ok is false when it has no
// samples.
func (e *Evidence) Stats(operationID, pathKey, evaluatorID string) (st ScoreStats, ok bool) {
	if e == nil {
		return ScoreStats{}, false
	}
	z := e.Z
	if z <= 0 {
		z = DefaultZ
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := e.scores[scoreKey{operationID, pathKey, evaluatorID}]
	if s == nil || s.n == 0 {
		return ScoreStats{}, false
	}
	st = ScoreStats{Samples: s.n, Mean: s.mean, PassRate: s.passes / s.n}
	st.Lower, st.Upper = math.Inf(-1), math.Inf(1)
	if s.n >= 2 {
		mean, half := s.bound(z)
		st.Lower, st.Upper = mean-half, mean+half
	}
	return st, true
}

// RememberExchange records that the path passed the operation's gates for
// the prompt, so the same prompt goes back to it.
func (e *Evidence) RememberExchange(promptFP, operationID, pathKey string) {
	e.xmu.Lock()
	defer e.xmu.Unlock()
	e.remember(exchangeKey{promptFP, operationID}, pathKey)
}

// remember inserts or refreshes an entry and evicts past the bound; the
// caller holds xmu.
func (e *Evidence) remember(k exchangeKey, path string) {
	if e.exchanges == nil {
		e.exchanges = map[exchangeKey]*list.Element{}
	}
	if el, ok := e.exchanges[k]; ok {
		el.Value.(*exchangeEntry).path = path
		e.lru.MoveToFront(el)
		return
	}
	e.exchanges[k] = e.lru.PushFront(&exchangeEntry{key: k, path: path})
	for e.lru.Len() > orDefault(e.MaxExchanges, DefaultMaxExchanges) {
		old := e.lru.Back()
		e.lru.Remove(old)
		delete(e.exchanges, old.Value.(*exchangeEntry).key)
	}
}

// RememberedPath returns the path remembered for the prompt and operation.
func (e *Evidence) RememberedPath(promptFP, operationID string) (string, bool) {
	if e == nil {
		return "", false
	}
	e.xmu.Lock()
	defer e.xmu.Unlock()
	el, ok := e.exchanges[exchangeKey{promptFP, operationID}]
	if !ok {
		return "", false
	}
	e.lru.MoveToFront(el)
	return el.Value.(*exchangeEntry).path, true
}

// ForgetExchange drops what is remembered for the prompt and operation: the
// eval pass calls it when the remembered path failed a gate on that prompt.
func (e *Evidence) ForgetExchange(promptFP, operationID string) {
	e.xmu.Lock()
	defer e.xmu.Unlock()
	k := exchangeKey{promptFP, operationID}
	if el, ok := e.exchanges[k]; ok {
		e.lru.Remove(el)
		delete(e.exchanges, k)
	}
}

// evidenceVersion is the version of the snapshot format.
const evidenceVersion = 1

// evidenceFile is the snapshot format.
type evidenceFile struct {
	Version int           `json:"version"`
	Scores  []scoreRecord `json:"scores"`
	// Exchanges are least recently used first, so replaying them in order
	// rebuilds the recency order.
	Exchanges []exchangeRecord `json:"exchanges"`
}

type scoreRecord struct {
	OperationID string  `json:"operation_id"`
	Path        string  `json:"path"`
	EvaluatorID string  `json:"evaluator_id"`
	N           float64 `json:"n"`
	Mean        float64 `json:"mean"`
	M2          float64 `json:"m2"`
	Passes      float64 `json:"passes"`
}

type exchangeRecord struct {
	Prompt      string `json:"prompt"`
	OperationID string `json:"operation_id"`
	Path        string `json:"path"`
}

// Snapshot encodes the evidence as JSON, series sorted by key so equal
// evidence gives equal bytes.
func (e *Evidence) Snapshot() ([]byte, error) {
	f := evidenceFile{Version: evidenceVersion, Scores: []scoreRecord{}, Exchanges: []exchangeRecord{}}
	e.mu.RLock()
	for k, s := range e.scores {
		f.Scores = append(f.Scores, scoreRecord{OperationID: k.operation, Path: k.path, EvaluatorID: k.evaluator,
			N: s.n, Mean: s.mean, M2: s.m2, Passes: s.passes})
	}
	e.mu.RUnlock()
	slices.SortFunc(f.Scores, func(a, b scoreRecord) int {
		return cmp.Or(cmp.Compare(a.OperationID, b.OperationID), cmp.Compare(a.Path, b.Path), cmp.Compare(a.EvaluatorID, b.EvaluatorID))
	})
	e.xmu.Lock()
	for el := e.lru.Back(); el != nil; el = el.Prev() {
		x := el.Value.(*exchangeEntry)
		f.Exchanges = append(f.Exchanges, exchangeRecord{Prompt: x.key.prompt, OperationID: x.key.operation, Path: x.path})
	}
	e.xmu.Unlock()
	return json.Marshal(f)
}

// Restore replaces the evidence with a snapshot. On error nothing changes.
func (e *Evidence) Restore(b []byte) error {
	var f evidenceFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decoding evidence: %w", err)
	}
	if f.Version != evidenceVersion {
		return fmt.Errorf("evidence snapshot version %d (want %d)", f.Version, evidenceVersion)
	}
	scores := make(map[scoreKey]*scoreStats, len(f.Scores))
	for i, r := range f.Scores {
		if !finite(r.N, r.Mean, r.M2, r.Passes) || r.N < 0 || r.Passes < 0 || r.Passes > r.N || r.M2 < 0 {
			return fmt.Errorf("evidence series %d (%s, %s, %s): counts out of range", i, r.OperationID, r.Path, r.EvaluatorID)
		}
		scores[scoreKey{r.OperationID, r.Path, r.EvaluatorID}] = &scoreStats{n: r.N, mean: r.Mean, m2: r.M2, passes: r.Passes}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.xmu.Lock()
	defer e.xmu.Unlock()
	e.scores = scores
	e.exchanges = nil
	e.lru.Init()
	for _, x := range f.Exchanges {
		e.remember(exchangeKey{x.Prompt, x.OperationID}, x.Path)
	}
	return nil
}

// finite reports whether every x is a number: a snapshot edited by hand
// must not poison every verdict with NaN.
func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
