package main

import (
	"context"
	"testing"
	"time"
)

// TestSoakSmoke runs the soak for a few seconds against a freshly built
// gateway: every kind of call gets its expected answer, the gateway is
// sampled, and the store's figures are read back. The full soak is
// `go run ./bench/load -soak -duration 10m`.
func TestSoakSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := runSoak(ctx, options{duration: 3 * time.Second, soakConcurrency: 4, soakSample: time.Second, soakRate: 200, soakPayloadTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unexpected > 0 {
		t.Fatalf("%d unexpected answers; first: %s", rep.Unexpected, rep.FirstUnexpected)
	}
	if rep.Requests == 0 || len(rep.ByKind) != len(soakKinds()) || len(rep.Samples) < 3 {
		t.Fatalf("requests %d, kinds %v, samples %d", rep.Requests, rep.ByKind, len(rep.Samples))
	}
	if rep.Calls == 0 || rep.InUseBytesPerCall <= 0 || rep.GoroutinesIdleBefore == 0 || rep.Samples[0].AnonMB <= 0 {
		t.Fatalf("figures missing: %+v", rep)
	}
	if rep.Flat != nil {
		t.Fatal("a soak of seconds must not judge flatness")
	}
}
