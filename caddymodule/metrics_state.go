package caddymodule

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stateCollector reports, when scraped, the gauges of what the gateway
// holds rather than what it did: the batch queue, the call writer's queue,
// whether the store answers, and the upstream paths cooling down. It reads
// the open stores (one per store file, shared across reloads), so it is
// made once with the other collectors and needs no goroutine of its own.
type stateCollector struct {
	batchDepth     *prometheus.Desc
	commitDepth    *prometheus.Desc
	commitCapacity *prometheus.Desc
	storeUp        *prometheus.Desc
	cooling        *prometheus.Desc
}

func newStateCollector() *stateCollector {
	return &stateCollector{
		batchDepth: prometheus.NewDesc("llm_gateway_batch_queue_depth",
			"Batch-tier calls queued or running.", nil, nil),
		commitDepth: prometheus.NewDesc("llm_gateway_store_commit_queue_depth",
			"Call records waiting for their group commit.", nil, nil),
		commitCapacity: prometheus.NewDesc("llm_gateway_store_commit_queue_capacity",
			"Call records that may wait before recording a call blocks.", nil, nil),
		storeUp: prometheus.NewDesc("llm_gateway_store_up",
			"1 when the store is open and answers a read, else 0.", nil, nil),
		cooling: prometheus.NewDesc("llm_gateway_upstream_paths_cooling_down",
			"Upstream paths skipped for now after repeated failures, by provider; a provider with none is absent.",
			[]string{labelProvider}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.batchDepth
	ch <- c.commitDepth
	ch <- c.commitCapacity
	ch <- c.storeUp
	ch <- c.cooling
}

// Collect implements prometheus.Collector. With no store open (no config
// has started one) it reports nothing.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	var open []pooledStore
	stores.Range(func(_, v any) bool {
		if ps, ok := v.(pooledStore); ok {
			open = append(open, ps)
		}
		return true
	})
	if len(open) == 0 {
		return
	}
	now := time.Now()
	var batch, pending, capacity int
	up := 1.0
	cooling := map[string]int{}
	for _, ps := range open {
		if ps.Health() != nil {
			up = 0
		} else {
			batch += ps.BatchQueueLen()
		}
		q := ps.CommitQueue()
		pending += q.Pending
		capacity += q.Capacity
		for _, p := range ps.shared.health.Failing(now) {
			if !p.CoolingUntil.IsZero() {
				cooling[providerOfPath(p.Key)]++
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(c.batchDepth, prometheus.GaugeValue, float64(batch))
	ch <- prometheus.MustNewConstMetric(c.commitDepth, prometheus.GaugeValue, float64(pending))
	ch <- prometheus.MustNewConstMetric(c.commitCapacity, prometheus.GaugeValue, float64(capacity))
	ch <- prometheus.MustNewConstMetric(c.storeUp, prometheus.GaugeValue, up)
	for provider, n := range cooling {
		ch <- prometheus.MustNewConstMetric(c.cooling, prometheus.GaugeValue, float64(n), provider)
	}
}

// providerOfPath is the provider of a path key (routing.PathKey): the
// text before its first '/', which a provider name cannot hold.
func providerOfPath(key string) string {
	provider, _, _ := strings.Cut(key, "/")
	return provider
}
