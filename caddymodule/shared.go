package caddymodule

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
)

// evidenceBlob names the saved routing evidence in the store.
const evidenceBlob = "routing_evidence"

// sharedState is what the gateway learns and counts while it runs, shared
// by every config that uses the same store file, so that a reload keeps it:
// the gate evidence routing learns from, upstream health, rate-limit
// buckets and the response cache.
type sharedState struct {
	evidence *routing.Evidence
	health   *routing.Health
	limiter  *routing.RateLimiter
	cache    *routing.Cache
	// slots counts each org's calls in flight.
	slots  orgSlots
	logger *zap.Logger
	quit   chan struct{}
	done   chan struct{}
}

// newSharedState restores the saved evidence and starts saving it every
// minute, so that a crash loses at most a minute of learning.
func newSharedState(st *reliability.BoltStore, cc *CacheConfig, logger *zap.Logger) *sharedState {
	s := &sharedState{
		evidence: new(routing.Evidence),
		health:   new(routing.Health),
		limiter:  new(routing.RateLimiter),
		cache:    new(routing.Cache),
		logger:   logger,
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if cc != nil {
		s.cache.MaxBytes, s.cache.TTL = cc.MaxSize, time.Duration(cc.TTL)
	}
	if b, err := st.Blob(evidenceBlob); err == nil {
		if err := s.evidence.Restore(b); err != nil {
			logger.Warn("saved routing evidence could not be read; starting afresh", zap.Error(err))
		}
	} else if !errors.Is(err, reliability.ErrNotFound) {
		logger.Warn("reading saved routing evidence", zap.Error(err))
	}
	go s.saveLoop(st)
	return s
}

func (s *sharedState) saveLoop(st *reliability.BoltStore) {
	defer close(s.done)
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.save(st)
		}
	}
}

func (s *sharedState) save(st *reliability.BoltStore) {
	b, err := s.evidence.Snapshot()
	if err == nil {
		err = st.SaveBlob(evidenceBlob, b)
	}
	if err != nil {
		s.logger.Error("saving routing evidence", zap.Error(err))
	}
}

// stop ends the save loop and saves one last time.
func (s *sharedState) stop(st *reliability.BoltStore) {
	close(s.quit)
	<-s.done
	s.save(st)
}

// onEvidence feeds one gate score of the eval pass to routing.
func (s *sharedState) onEvidence(e reliability.GateEvidence) {
	if e.PathKey == "" {
		return
	}
	s.evidence.Add(e.OperationID, e.PathKey, e.EvaluatorID, e.Score, e.Passed)
}

// onScored remembers which path passed every gate for a prompt, and
// forgets a remembered path that failed.
func (s *sharedState) onScored(e reliability.GateEvidence) {
	if e.PathKey == "" || e.PromptFingerprint == "" {
		return
	}
	if e.Passed {
		s.evidence.RememberExchange(e.PromptFingerprint, e.OperationID, e.PathKey)
		return
	}
	if key, ok := s.evidence.RememberedPath(e.PromptFingerprint, e.OperationID); ok && key == e.PathKey {
		s.evidence.ForgetExchange(e.PromptFingerprint, e.OperationID)
	}
}
