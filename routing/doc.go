// Package routing holds the model catalog and the decisions a call needs
// before and after it reaches an upstream: route selection for pinned ids
// and routers (router.go) on gate evidence (evidence.go), pricing, tier
// scheduling (tiers.go), rate limits, upstream health, the response cache
// and fingerprints. It does no I/O: the Caddy glue calls it.
package routing
