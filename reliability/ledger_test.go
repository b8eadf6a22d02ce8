package reliability

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// sumOfEntries adds up every ledger entry of the org, in the ledger's unit.
func sumOfEntries(t *testing.T, s *BoltStore, orgID string) (int64, []LedgerEntry) {
	t.Helper()
	var (
		sum     int64
		entries []LedgerEntry
	)
	q := PageQuery{Limit: MaxPageLimit}
	for {
		page, err := s.LedgerEntries(orgID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			n, err := toNanos(e.AmountUSD)
			if err != nil {
				t.Fatal(err)
			}
			sum += n
			entries = append(entries, e)
		}
		if !page.HasMore {
			return sum, entries
		}
		q.Cursor = *page.NextCursor
	}
}

func TestNewOrgGetsStartingCreditOnce(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureOrg("acme"); err != nil {
		t.Fatal(err)
	}
	bal, err := s.Balance(org.ID)
	if err != nil || bal != StartingCreditUSD {
		t.Fatalf("Balance = %v, %v; want %v", bal, err, StartingCreditUSD)
	}
	_, entries := sumOfEntries(t, s, org.ID)
	if len(entries) != 1 {
		t.Fatalf("entries = %+v, want the starting credit only", entries)
	}
	e := entries[0]
	if !strings.HasPrefix(e.ID, "led_") || e.Object != ObjectLedgerEntry || e.Kind != LedgerTopup ||
		e.AmountUSD != 5 || e.CallID != nil || e.OrgID != org.ID || e.Reason != "starting credit" {
		t.Fatalf("starting credit entry = %+v", e)
	}
}

func TestChargeTopupAndBalance(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	if err := s.Charge(org.ID, "call_1", 0.0012); err != nil {
		t.Fatal(err)
	}
	if err := s.Charge(org.ID, "call_1", 0.0008); err != nil {
		t.Fatal(err)
	}
	if err := s.Charge(org.ID, "call_free", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Topup(org.ID, 10, "auto top-up"); err != nil {
		t.Fatal(err)
	}
	bal, err := s.Balance(org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 - 0.002 + 10; math.Abs(bal-want) > 1e-12 {
		t.Fatalf("Balance = %v, want %v", bal, want)
	}
	sum, entries := sumOfEntries(t, s, org.ID)
	if len(entries) != 4 {
		t.Fatalf("%d entries, want 4 (the free call records none)", len(entries))
	}
	if entries[0].Kind != LedgerTopup || entries[1].Kind != LedgerCharge || entries[1].AmountUSD != -0.0008 {
		t.Fatalf("entries not newest first or wrong sign: %+v", entries)
	}
	if n, _ := toNanos(bal); n != sum {
		t.Fatalf("balance %d != sum of entries %d", n, sum)
	}
}

func TestChargeRejects(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	for _, amount := range []float64{-1, math.NaN(), math.Inf(1), 2e6} {
		if err := s.Charge(a.ID, "call_x", amount); err == nil {
			t.Errorf("Charge(%v) accepted", amount)
		}
	}
	if err := s.Charge(a.ID, "", 1); err == nil {
		t.Error("Charge without a call id accepted")
	}
	if err := s.Charge("org_missing", "call_x", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Charge of a missing org: %v", err)
	}
	if err := s.Charge(a.ID, "call_shared", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Charge(b.ID, "call_shared", 1); !errors.Is(err, ErrForbidden) {
		t.Errorf("Charge of another org's call: %v, want ErrForbidden", err)
	}
	if _, err := s.Topup(a.ID, 0, ""); err == nil {
		t.Error("Topup of 0 accepted")
	}
	if _, err := s.Balance("org_missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Balance of a missing org: %v", err)
	}
}

func TestBalanceEqualsSumUnderConcurrency(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	const calls = 40
	var wg sync.WaitGroup
	for i := range calls {
		id := "call_" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		wg.Add(3)
		go func() {
			defer wg.Done()
			if err := s.Charge(org.ID, id, 0.000123*float64(i+1)); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, _, err := s.RefundCall(org.ID, id, RefundReasonThumbsDown); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.Topup(org.ID, 0.01, "test"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sum, _ := sumOfEntries(t, s, org.ID)
	var stored int64
	_ = s.db.View(func(tx *bolt.Tx) error {
		stored = readBalance(tx.Bucket(bucketBalances), org.ID)
		return nil
	})
	if stored != sum {
		t.Fatalf("stored balance %d != sum of entries %d", stored, sum)
	}
	bal, _ := s.Balance(org.ID)
	if bal != fromNanos(sum) {
		t.Fatalf("Balance %v != %v", bal, fromNanos(sum))
	}
}

func TestNanosRoundTrip(t *testing.T) {
	for _, usd := range []float64{0, 1e-9, 0.0012, 5, 123.456789012, -0.75} {
		n, err := toNanos(usd)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := toNanos(fromNanos(n))
		if back != n {
			t.Errorf("%v: %d -> %v -> %d", usd, n, fromNanos(n), back)
		}
	}
}

// TestRecordCallChargesInTheSameCommit: a call recorded with ChargeUSD is
// charged when its record commits, once, and a refund gives that back.
func TestRecordCallChargesInTheSameCommit(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("charged")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Balance(org.ID)
	s.RecordCall(&Call{ID: "chatcmpl-charge1", OrgID: org.ID, Model: "m", RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: 0.25})
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Balance(org.ID)
	if d := before - after; d < 0.2499999 || d > 0.2500001 {
		t.Fatalf("balance moved by %v, want 0.25", d)
	}
	refunded, amount, err := s.RefundCall(org.ID, "chatcmpl-charge1", "test")
	if err != nil || !refunded || amount < 0.2499999 || amount > 0.2500001 {
		t.Fatalf("refund %v %v %v", refunded, amount, err)
	}
	if final, _ := s.Balance(org.ID); final < before-1e-9 || final > before+1e-9 {
		t.Fatalf("balance after refund %v, want %v", final, before)
	}
}

// TestCommittedBatchKeepsBalancesEqualToEntries: one commit of many charged
// calls, across orgs and with a call recorded twice, writes every charge as
// an entry and leaves each balance equal to the sum of its entries.
func TestCommittedBatchKeepsBalancesEqualToEntries(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("batch-a")
	b, _ := s.EnsureOrg("batch-b")
	var batch []*pendingCall
	add := func(id, orgID string, usd float64) {
		t.Helper()
		p, err := prepareCall(&Call{ID: id, OrgID: orgID, Model: "m", RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: usd}, s.rec.report)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, p)
	}
	for i := range 20 {
		org := a.ID
		if i%3 == 0 {
			org = b.ID
		}
		add("chatcmpl-batch"+string(rune('a'+i)), org, 0.001*float64(i+1))
	}
	add("chatcmpl-batchb", a.ID, 0.5) // recorded again: charged again
	if err := s.commitCalls(batch); err != nil {
		t.Fatal(err)
	}
	for _, org := range []Org{a, b} {
		sum, entries := sumOfEntries(t, s, org.ID)
		var stored int64
		_ = s.db.View(func(tx *bolt.Tx) error {
			stored = readBalance(tx.Bucket(bucketBalances), org.ID)
			return nil
		})
		if stored != sum {
			t.Fatalf("org %s: stored balance %d != sum of entries %d", org.Name, stored, sum)
		}
		charges := 0
		for _, e := range entries {
			if e.Kind == LedgerCharge {
				charges++
			}
		}
		want := 7 // i = 0, 3, ..., 18
		if org.ID == a.ID {
			want = 14
		}
		if charges != want {
			t.Fatalf("org %s: %d charge entries, want %d", org.Name, charges, want)
		}
	}
	refunded, amount, err := s.RefundCall(a.ID, "chatcmpl-batchb", "test")
	if err != nil || !refunded || math.Abs(amount-0.502) > 1e-9 {
		t.Fatalf("refund of the call charged twice: %v %v %v", refunded, amount, err)
	}
}

// TestCommitRejectsChargeOfUnknownOrg: a charge to an org that does not
// exist fails the commit, whatever else the batch holds.
func TestCommitRejectsChargeOfUnknownOrg(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("known")
	var batch []*pendingCall
	for _, orgID := range []string{a.ID, "org_missing"} {
		p, err := prepareCall(&Call{OrgID: orgID, Model: "m", RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), ChargeUSD: 0.1}, s.rec.report)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, p)
	}
	if err := s.commitCalls(batch); !errors.Is(err, ErrNotFound) {
		t.Fatalf("commit charging an unknown org: %v, want ErrNotFound", err)
	}
	if bal, _ := s.Balance(a.ID); bal != StartingCreditUSD {
		t.Fatalf("balance after a failed commit = %v, want %v", bal, StartingCreditUSD)
	}
}
