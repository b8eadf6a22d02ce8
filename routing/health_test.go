package routing

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/gateway/translate"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func TestHealthCooldown(t *testing.T) {
	h := &Health{}
	const p = "a/m@full"
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	h.Failure(p, at(0))
	h.Failure(p, at(0))
	if !h.Open(p, at(0)) {
		t.Fatal("two failures cooled the path down")
	}
	h.Failure(p, at(time.Second))
	if h.Open(p, at(time.Second)) || h.Open(p, at(6*time.Second-1)) {
		t.Fatal("three failures did not cool the path down for 5s")
	}
	// Calls in flight when it tripped fail too: still one cool-down.
	h.Failure(p, at(2*time.Second))
	h.Failure(p, at(3*time.Second))

	// Half-open: one trial, the others are refused until it reports.
	if !h.Open(p, at(6*time.Second)) {
		t.Fatal("no trial after the cool-down")
	}
	if h.Open(p, at(6*time.Second)) {
		t.Fatal("a second trial while the first is out")
	}
	// The trial fails: 10s, then 20s, 40s, ... up to 5m.
	cool := 10 * time.Second
	now := at(6 * time.Second)
	for range 10 {
		h.Failure(p, now)
		if h.Open(p, now.Add(cool-1)) {
			t.Fatalf("open before a cool-down of %v ended", cool)
		}
		now = now.Add(cool)
		if !h.Open(p, now) {
			t.Fatalf("no trial after a cool-down of %v", cool)
		}
		cool = min(2*cool, 5*time.Minute)
	}
	// The trial succeeds: the record is cleared.
	h.Success(p)
	if !h.Open(p, now) || !h.Open(p, now) {
		t.Fatal("path closed after a success")
	}
	h.Failure(p, now)
	if !h.Open(p, now) {
		t.Fatal("a success did not reset the failure count")
	}
}

// A trial whose call never reports (its client went away) is given up, so
// the path is not closed forever.
func TestHealthTrialLease(t *testing.T) {
	h := &Health{Threshold: 1, BaseCooldown: time.Second, MaxCooldown: time.Minute}
	h.Failure("p", t0)
	if !h.Open("p", t0.Add(time.Second)) || h.Open("p", t0.Add(1500*time.Millisecond)) {
		t.Fatal("half-open trial not granted once")
	}
	if !h.Open("p", t0.Add(2*time.Second)) {
		t.Fatal("lost trial never given up")
	}
}

func TestRouteHealthy(t *testing.T) {
	c := testCatalog(t)
	ev := &Evidence{}
	feed(ev, "op_1", keyPartnerQ4, 30, 0.1)
	r, err := c.SelectRouted("router-1", Constraints{Dialect: translate.Chat, Tier: "standard"},
		Gating{OperationID: "op_1", Gates: gatesOf}, ev, func() float64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	// Explored gpt-mini, then partner q4, partner full, reference full.
	if !r.Explored || !slices.Equal(keys(r), []string{keyMini, keyPartnerQ4, keyPartnerFull, keyRefFull}) {
		t.Fatalf("route %v explored %v", keys(r), r.Explored)
	}
	h := &Health{Threshold: 1}
	kept, skipped := r.Healthy(h, t0)
	if len(skipped) != 0 || !slices.Equal(keys(kept), keys(r)) {
		t.Fatalf("healthy route changed: %v", keys(kept))
	}

	h.Failure(keyMini, t0)
	h.Failure(keyPartnerFull, t0)
	kept, skipped = r.Healthy(h, t0.Add(time.Second))
	if !slices.Equal(keys(kept), []string{keyPartnerQ4, keyRefFull}) || len(skipped) != 2 || PathKey(skipped[0]) != keyMini {
		t.Fatalf("kept %v skipped %d", keys(kept), len(skipped))
	}
	if kept.Explored || kept.Model.ID != "meta/llama-70b" {
		t.Errorf("the explored path was skipped: explored %v, model %s", kept.Explored, kept.Model.ID)
	}

	for _, k := range keys(r) {
		h.Failure(k, t0)
	}
	kept, skipped = r.Healthy(h, t0.Add(time.Second))
	if !slices.Equal(keys(kept), keys(r)) || skipped != nil || !kept.Explored {
		t.Errorf("all cooling: kept %v skipped %d", keys(kept), len(skipped))
	}
	if kept, _ := r.Healthy(nil, t0); !slices.Equal(keys(kept), keys(r)) {
		t.Error("nil health changed the route")
	}
}

func TestHealthConcurrent(t *testing.T) {
	h := &Health{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				now := t0.Add(time.Duration(i) * time.Millisecond)
				if h.Open("p", now) && (i+w)%4 == 0 {
					h.Success("p")
				} else {
					h.Failure("p", now)
				}
			}
		})
	}
	wg.Wait()
}

// TestHealthFailing: Failing lists the paths with failures since their
// last success, with the end of a cool-down while it lasts; a success
// takes a path off the list.
func TestHealthFailing(t *testing.T) {
	h := &Health{}
	if got := h.Failing(t0); len(got) != 0 {
		t.Fatalf("fresh Health lists %+v", got)
	}
	h.Failure("a/m@full", t0)
	for range 3 {
		h.Failure("b/m@full", t0)
	}
	got := h.Failing(t0)
	slices.SortFunc(got, func(x, y PathState) int { return strings.Compare(x.Key, y.Key) })
	want := []PathState{{Key: "a/m@full", Fails: 1}, {Key: "b/m@full", Fails: 3, CoolingUntil: t0.Add(DefaultBaseCooldown)}}
	if !slices.Equal(got, want) {
		t.Fatalf("Failing = %+v, want %+v", got, want)
	}
	if got := h.Failing(t0.Add(DefaultBaseCooldown)); len(got) != 2 || !got[0].CoolingUntil.IsZero() || !got[1].CoolingUntil.IsZero() {
		t.Fatalf("after the cool-down, Failing = %+v, want both listed and none cooling", got)
	}
	h.Success("a/m@full")
	h.Success("b/m@full")
	if got := h.Failing(t0); len(got) != 0 {
		t.Fatalf("after successes, Failing = %+v", got)
	}
}
