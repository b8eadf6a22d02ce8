package caddymodule

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// RetentionConfig bounds what the store keeps of each call, so that the
// file's size follows the traffic of the retention period rather than of
// all time. A zero field takes its default.
type RetentionConfig struct {
	// MaxPayloadSize is the largest request or response payload a call
	// record keeps whole, in bytes. A larger payload is kept as
	// {"truncated":true,"original_bytes":N,"prefix":"<its first bytes>"}.
	// Default 1 MiB; negative keeps every payload whole.
	MaxPayloadSize int64 `json:"max_payload_size,omitempty"`
	// PayloadTTL is how long call payloads are kept: after it they are
	// replaced by {"pruned":true,"original_bytes":N}, while the rest of
	// the record (tokens, cost, attempts, delivery) stays. Default 720h
	// (30 days); negative keeps payloads for good.
	PayloadTTL caddy.Duration `json:"payload_ttl,omitempty"`
	// PruneInterval is how often expired payloads are pruned. Default 10m.
	PruneInterval caddy.Duration `json:"prune_interval,omitempty"`
	// PruneBatch is how many calls one pruning transaction visits; small
	// transactions keep the call writer from waiting. Default 256.
	PruneBatch int `json:"prune_batch,omitempty"`
	// MaxPageSize bounds the stored size of the records of one list page
	// (GET /calls and every other list), in bytes: a page ends early, with
	// has_more and a cursor, rather than pass it; its first record is
	// always included. Default 8 MiB.
	MaxPageSize int64 `json:"max_page_size,omitempty"`
}

// Defaults of RetentionConfig.
const (
	defaultPayloadTTL    = 30 * 24 * time.Hour
	defaultPruneInterval = 10 * time.Minute
)

// retention is RetentionConfig with its defaults applied.
type retention struct {
	maxPayload    int
	payloadTTL    time.Duration // <= 0: keep for good
	pruneInterval time.Duration
	pruneBatch    int
	maxPage       int
}

// resolve applies the defaults.
func (c *RetentionConfig) resolve() (retention, error) {
	if c == nil {
		c = new(RetentionConfig)
	}
	r := retention{
		maxPayload:    reliability.DefaultMaxPayloadBytes,
		payloadTTL:    defaultPayloadTTL,
		pruneInterval: defaultPruneInterval,
		pruneBatch:    reliability.DefaultPruneBatch,
		maxPage:       reliability.DefaultMaxPageBytes,
	}
	switch {
	case c.MaxPayloadSize < 0:
		r.maxPayload = -1
	case c.MaxPayloadSize > 1<<30:
		return r, fmt.Errorf("retention: max_payload_size %d is over 1 GiB", c.MaxPayloadSize)
	case c.MaxPayloadSize > 0:
		r.maxPayload = int(max(c.MaxPayloadSize, 256))
	}
	if c.PayloadTTL != 0 {
		r.payloadTTL = time.Duration(c.PayloadTTL)
	}
	if c.PruneInterval > 0 {
		r.pruneInterval = time.Duration(c.PruneInterval)
	}
	if c.PruneBatch > 0 {
		r.pruneBatch = c.PruneBatch
	}
	switch {
	case c.MaxPageSize < 0 || c.MaxPageSize > 1<<30:
		return r, fmt.Errorf("retention: max_page_size %d is outside 1 byte..1 GiB", c.MaxPageSize)
	case c.MaxPageSize > 0:
		r.maxPage = int(c.MaxPageSize)
	}
	return r, nil
}

// startPruner applies the payload limit to the store and, unless payloads
// are kept for good, prunes expired payloads now and every prune interval
// until the app stops. During a reload the old and the new config may both
// prune for a moment: pruning a call twice changes nothing.
func (a *App) startPruner(st *reliability.BoltStore) {
	st.SetRetention(reliability.Retention{MaxPayloadBytes: a.retention.maxPayload})
	if a.retention.payloadTTL <= 0 {
		return
	}
	quit, done := make(chan struct{}), make(chan struct{})
	a.rt.pruneQuit, a.rt.pruneDone = quit, done
	go func() {
		defer close(done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			n, err := st.PrunePayloads(time.Now().Add(-a.retention.payloadTTL), a.retention.pruneBatch, quit)
			switch {
			case err != nil:
				a.logger.Error("pruning expired call payloads", zap.Error(err))
			case n > 0:
				a.logger.Info("pruned expired call payloads", zap.Int("calls", n))
			}
			t.Reset(a.retention.pruneInterval)
		}
	}()
}

// stopPruner ends the pruning loop and waits for it.
func (a *App) stopPruner() {
	if a.rt.pruneQuit == nil {
		return
	}
	close(a.rt.pruneQuit)
	<-a.rt.pruneDone
	a.rt.pruneQuit = nil
}
