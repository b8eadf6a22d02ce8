package reliability

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestReserveRefusesPastTheFloor: what is reserved is not available to the
// next call, and a release gives it back.
func TestReserveRefusesPastTheFloor(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := s.Reserve(org.ID, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Reserve(org.ID, 2.5, 0)
	var ce *CreditError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInsufficientCredit) {
		t.Fatalf("second reservation: err = %v, want a CreditError", err)
	}
	if ce.NeedUSD != 2.5 || ce.AvailableUSD != 2 {
		t.Fatalf("CreditError = %+v, want need 2.5, available 2", ce)
	}
	avail, reserved, err := s.Available(org.ID)
	if err != nil || avail != 2 || reserved != 3 {
		t.Fatalf("Available = %v, %v, %v; want 2, 3", avail, reserved, err)
	}
	// An overdraft lowers the floor.
	r2, err := s.Reserve(org.ID, 2.5, 1)
	if err != nil {
		t.Fatalf("reservation within the overdraft: %v", err)
	}
	r1.Release()
	r1.Release() // idempotent
	r2.Release()
	if avail, reserved, _ := s.Available(org.ID); avail != 5 || reserved != 0 {
		t.Fatalf("after release: available %v reserved %v, want 5 and 0", avail, reserved)
	}
	// An org at its floor cannot even start a call that may cost nothing.
	if _, err := s.Reserve(org.ID, 5, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reserve(org.ID, 0, 0); !errors.Is(err, ErrInsufficientCredit) {
		t.Fatalf("zero reservation at the floor: err = %v, want ErrInsufficientCredit", err)
	}
}

// TestReservationsNeverCrossTheFloor runs many concurrent calls, each
// reserving its worst case, charging a random part of it through the call
// writer (asynchronous commits) and releasing, with refunds and top-ups
// landing meanwhile. At every step the balance less the charges not yet
// committed stays at or above the floor, and at the end the balance equals
// the sum of entries and is at or above the floor.
func TestReservationsNeverCrossTheFloor(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			testReservationsNeverCrossTheFloor(t, seed)
		})
	}
}

func testReservationsNeverCrossTheFloor(t *testing.T, seed uint64) {
	s, _ := openTestStore(t, BoltOptions{OnError: func(err error) { t.Logf("store: %v", err) }})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	overdraft := []float64{0, 0.5}[seed%2]
	floor, _ := toNanos(-overdraft)
	var recorded atomic.Int64
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		served  int
		refused int
	)
	check := func() {
		oc := s.credit.org(org.ID)
		oc.mu.Lock()
		bal, unseen, err := s.creditOf(org.ID, oc)
		reserved := oc.reserved
		oc.mu.Unlock()
		if err != nil {
			t.Error(err)
			return
		}
		// A call holds its reservation until just after its charge is
		// queued, so for a moment both count: the charges alone are
		// what must never cross the floor, and the reservations left
		// must fit in what the charges leave.
		if bal-unseen < floor {
			t.Errorf("balance %d - unseen charges %d is below the floor %d", bal, unseen, floor)
		}
		if reserved < 0 {
			t.Errorf("reserved %d is negative", reserved)
		}
		if bal < floor {
			t.Errorf("committed balance %d is below the floor %d", bal, floor)
		}
	}
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := range 40 {
				need := float64(rng.IntN(400_000)) / 1e6 // up to 0.4 USD
				res, err := s.Reserve(org.ID, need, overdraft)
				if err != nil {
					if !errors.Is(err, ErrInsufficientCredit) {
						t.Error(err)
						return
					}
					mu.Lock()
					refused++
					mu.Unlock()
					continue
				}
				id := fmt.Sprintf("chatcmpl-%d-%d-%d", seed, w, i)
				charge := res.USD() * rng.Float64()
				if rng.IntN(8) == 0 {
					charge = 0 // a failed call: released, not charged
				}
				if charge > 0 {
					n, _ := toNanos(charge)
					recorded.Add(n)
					s.RecordCall(&Call{ID: id, OrgID: org.ID, Model: "m", Status: CallSucceeded,
						RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: charge})
				}
				res.Release()
				switch rng.IntN(20) {
				case 0:
					if err := s.Sync(); err != nil {
						t.Error(err)
					}
				case 1:
					if charge > 0 {
						if err := s.Sync(); err != nil {
							t.Error(err)
						}
						if _, _, err := s.RefundCall(org.ID, id, RefundReasonThumbsDown); err != nil {
							t.Error(err)
						}
					}
				case 2:
					if _, err := s.Topup(org.ID, 0.05, "test top-up"); err != nil {
						t.Error(err)
					}
				}
				check()
				mu.Lock()
				served++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	check()
	sum, entries := sumOfEntries(t, s, org.ID)
	var charged int64
	for _, e := range entries {
		if e.Kind == LedgerCharge {
			n, _ := toNanos(e.AmountUSD)
			charged -= n
		}
	}
	if charged != recorded.Load() {
		t.Fatalf("the ledger charged %d nano-USD, the calls %d", charged, recorded.Load())
	}
	bal, _, err := s.creditOf(org.ID, s.credit.org(org.ID))
	if err != nil || bal != sum {
		t.Fatalf("balance %d (%v) != sum of entries %d", bal, err, sum)
	}
	if refused == 0 {
		t.Fatalf("no call was refused (%d served): the test did not reach the floor", served)
	}
	if oc := s.credit.org(org.ID); oc.reserved != 0 || oc.queued != 0 || len(oc.inflight) != 0 {
		t.Fatalf("after every call: reserved %d, queued %d, in flight %v; want none", oc.reserved, oc.queued, oc.inflight)
	}
}

// TestUnreadChargesStayBounded: charges of an org (and a key) whose credit
// no one reads do not pile up in memory: each commit forgets the ones the
// commits before it made visible.
func TestUnreadChargesStayBounded(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		s.RecordCall(&Call{ID: fmt.Sprintf("chatcmpl-%d", i), OrgID: org.ID, KeyID: "key_cfg_x", Model: "m", Status: CallSucceeded,
			RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: 0.000001})
		if i%100 == 99 {
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	oc := s.credit.org(org.ID)
	oc.mu.Lock()
	n := len(oc.inflight)
	oc.mu.Unlock()
	if n > 100 {
		t.Fatalf("%d charges held for an org no one read", n)
	}
	ka := s.keys.spend.account("key_cfg_x")
	ka.mu.Lock()
	n = len(ka.inflight)
	ka.mu.Unlock()
	if n > 100 {
		t.Fatalf("%d charges held for a key no one read", n)
	}
	if avail, _, err := s.Available(org.ID); err != nil || math.Abs(avail-(5-0.002)) > 1e-9 {
		t.Fatalf("available %v, %v: want 4.998", avail, err)
	}
}
