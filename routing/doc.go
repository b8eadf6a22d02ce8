// Package routing holds the model catalog, route selection, tiers, pricing,
// fingerprints, the response cache and upstream health.
package routing
