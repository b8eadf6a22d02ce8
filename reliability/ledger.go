package reliability

import (
	"strconv"

	"encoding/binary"
	"errors"
	"fmt"
	"github.com/modelgate/gateway/translate"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ObjectLedgerEntry is the object tag of a LedgerEntry.
const ObjectLedgerEntry = "ledger_entry"

// Kinds of ledger entry.
const (
	// LedgerCharge is what a call cost; its amount is negative.
	LedgerCharge = "charge"
	// LedgerRefund gives a call's charge back; its amount is positive.
	LedgerRefund = "refund"
	// LedgerTopup adds credit: the starting credit, auto top-up.
	LedgerTopup = "topup"
)

// StartingCreditUSD is the credit a new org starts with (SPEC section 1).
const StartingCreditUSD = 5.0

// nanosPerUSD is the ledger's unit: amounts are kept as whole nano-USD, so
// that a balance is the exact sum of its entries however many there are.
// A call's cost can be a small fraction of a cent, far above this unit.
const nanosPerUSD = 1e9

// maxLedgerUSD bounds one entry, far above any real amount, so that a sum
// of entries cannot overflow the nano-USD integer.
const maxLedgerUSD = 1e6

// LedgerEntry is one change to an org's credit. An org's balance is the
// sum of the amounts of its entries.
type LedgerEntry struct {
	// ID is the entry's id, prefix "led_".
	ID string `json:"id"`
	// Object is always "ledger_entry".
	Object string `json:"object"`
	// OrgID is the org whose balance the entry changes.
	OrgID string `json:"org_id"`
	// Kind is LedgerCharge, LedgerRefund or LedgerTopup.
	Kind string `json:"kind"`
	// AmountUSD is the change to the balance: negative for a charge.
	AmountUSD float64 `json:"amount_usd"`
	// CallID is the call a charge or refund is for, or nil.
	CallID *string `json:"call_id"`
	// Reason says why a refund or top-up was made.
	Reason string `json:"reason,omitempty"`
	// CreatedAt is when the entry was made; lists are ordered by it.
	CreatedAt time.Time `json:"created_at"`
}

// callCharge is what the ledger has charged for one call, kept so that a
// refund gives back exactly that and only to the org that paid it.
type callCharge struct {
	// OrgID is the org that paid.
	OrgID string `json:"org_id"`
	// Nanos is the sum of the call's charges in nano-USD.
	Nanos int64 `json:"nanos"`
}

// toNanos converts a USD amount to the ledger's unit.
func toNanos(usd float64) (int64, error) {
	if math.IsNaN(usd) || math.IsInf(usd, 0) || math.Abs(usd) > maxLedgerUSD {
		return 0, fmt.Errorf("amount %v USD is not a finite number within ±%g", usd, float64(maxLedgerUSD))
	}
	return int64(math.Round(usd * nanosPerUSD)), nil
}

// fromNanos converts the ledger's unit back to USD.
func fromNanos(n int64) float64 {
	return float64(n) / nanosPerUSD
}

// appendLedger writes an entry, its index entry and the org's new balance
// in the caller's transaction, so an entry and the balance it changes are
// never apart.
func appendLedger(tx *bolt.Tx, orgID, kind string, nanos int64, callID *string, reason string, at time.Time) (LedgerEntry, error) {
	l := newLedgerTx(tx)
	e, err := l.append(orgID, kind, nanos, callID, reason, at)
	if err != nil {
		return LedgerEntry{}, err
	}
	if err := l.flush(); err != nil {
		return LedgerEntry{}, err
	}
	return e, nil
}

// ledgerTx writes ledger entries inside one transaction. The balance of
// each org is read and written once, by flush, with the sum of the entries
// appended for it: a commit of many calls then updates each balance once
// instead of once per call, and the balance still equals the sum of the
// entries when the transaction commits.
type ledgerTx struct {
	entries, byOrg, balances, orgs, charges *bolt.Bucket
	// deltas are the pending balance changes; a batch rarely spans more
	// than a few orgs, so a slice is faster than a map.
	deltas []orgDelta
	// key is scratch space for index keys, which bbolt copies on Put.
	key []byte
}

// orgDelta is the change to one org's balance not yet written.
type orgDelta struct {
	orgID string
	nanos int64
}

func newLedgerTx(tx *bolt.Tx) *ledgerTx {
	return &ledgerTx{
		entries:  tx.Bucket(bucketLedger),
		byOrg:    tx.Bucket(bucketLedgerByOrg),
		balances: tx.Bucket(bucketBalances),
		orgs:     tx.Bucket(bucketOrgs),
		charges:  tx.Bucket(bucketCallCharges),
	}
}

// append writes an entry and its index entry, and notes the balance change
// for flush.
func (l *ledgerTx) append(orgID, kind string, nanos int64, callID *string, reason string, at time.Time) (LedgerEntry, error) {
	e := LedgerEntry{
		ID:        NewID("led_"),
		Object:    ObjectLedgerEntry,
		OrgID:     orgID,
		Kind:      kind,
		AmountUSD: fromNanos(nanos),
		CallID:    callID,
		Reason:    reason,
		CreatedAt: at.UTC(),
	}
	// Every served call writes one of these: encoded by hand, not by
	// reflection.
	if err := l.entries.Put([]byte(e.ID), appendLedgerEntry(make([]byte, 0, 192), &e)); err != nil {
		return LedgerEntry{}, fmt.Errorf("put ledger entry: %w", err)
	}
	l.key = appendIndexKey(appendIndexField(l.key[:0], orgID), e.CreatedAt, e.ID)
	if err := l.byOrg.Put(l.key, []byte(e.ID)); err != nil {
		return LedgerEntry{}, fmt.Errorf("index ledger entry: %w", err)
	}
	for i := range l.deltas {
		if l.deltas[i].orgID == orgID {
			l.deltas[i].nanos += nanos
			return e, nil
		}
	}
	l.deltas = append(l.deltas, orgDelta{orgID: orgID, nanos: nanos})
	return e, nil
}

// flush writes the balances changed since the last flush.
func (l *ledgerTx) flush() error {
	for _, d := range l.deltas {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(readBalance(l.balances, d.orgID)+d.nanos))
		if err := l.balances.Put([]byte(d.orgID), buf[:]); err != nil {
			return fmt.Errorf("update balance: %w", err)
		}
	}
	clear(l.deltas)
	l.deltas = l.deltas[:0]
	return nil
}

// readBalance is the org's balance in nano-USD; an org without entries
// has none.
func readBalance(balances *bolt.Bucket, orgID string) int64 {
	v := balances.Get([]byte(orgID))
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// Charge debits amount USD from the org for the call. Several charges of
// one call add up, and a refund of the call gives back their sum. A zero
// amount (a free model) records nothing. The charge is on disk when Charge
// returns.
func (s *BoltStore) Charge(orgID, callID string, amount float64) error {
	nanos, err := toNanos(amount)
	if err == nil && amount < 0 {
		err = errors.New("a charge cannot be negative")
	}
	if err == nil && callID == "" {
		err = errors.New("call id is empty")
	}
	if err != nil {
		return fmt.Errorf("charge org %s for call %s: %w", orgID, callID, err)
	}
	if nanos == 0 {
		return nil
	}
	err = s.db.Update(func(tx *bolt.Tx) error { return chargeTx(tx, orgID, callID, nanos, time.Now()) })
	if err != nil {
		return fmt.Errorf("charge org %s for call %s: %w", orgID, callID, err)
	}
	return nil
}

// chargeTx charges nanos (nano-USD, > 0) for a call inside tx: the charge
// entry, the balance and the per-call total a refund gives back.
func chargeTx(tx *bolt.Tx, orgID, callID string, nanos int64, at time.Time) error {
	l := newLedgerTx(tx)
	if err := l.charge(orgID, callID, nanos, at, false); err != nil {
		return err
	}
	return l.flush()
}

// charge is chargeTx within l: the balance is written by l's flush. First is
// true when the call has never been recorded, so it cannot have been
// charged before and there is no earlier total to look up.
func (l *ledgerTx) charge(orgID, callID string, nanos int64, at time.Time, first bool) error {
	// An org with a pending balance change was found already in this
	// transaction, and orgs are never removed.
	if !l.pending(orgID) && l.orgs.Get([]byte(orgID)) == nil {
		return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
	}
	key := []byte(callID)
	cc := callCharge{OrgID: orgID}
	if !first {
		cc = callCharge{}
		switch err := getJSON(l.charges, key, &cc); {
		case errors.Is(err, ErrNotFound):
			cc.OrgID = orgID
		case err != nil:
			return err
		case cc.OrgID != orgID:
			return fmt.Errorf("call %s was charged to another org: %w", callID, ErrForbidden)
		}
	}
	cc.Nanos += nanos
	ccb := append(make([]byte, 0, len(cc.OrgID)+40), `{"org_id":`...)
	ccb = translate.AppendJSONString(ccb, cc.OrgID)
	ccb = strconv.AppendInt(append(ccb, `,"nanos":`...), cc.Nanos, 10)
	if err := l.charges.Put(key, append(ccb, '}')); err != nil {
		return fmt.Errorf("put charge of call %s: %w", callID, err)
	}
	_, err := l.append(orgID, LedgerCharge, -nanos, &callID, "", at)
	return err
}

// pending reports whether orgID has a balance change not yet flushed.
func (l *ledgerTx) pending(orgID string) bool {
	for i := range l.deltas {
		if l.deltas[i].orgID == orgID {
			return true
		}
	}
	return false
}

// Topup credits amount USD to the org, e.g. when auto top-up finds the
// balance under its threshold; reason is kept on the entry.
func (s *BoltStore) Topup(orgID string, amount float64, reason string) (LedgerEntry, error) {
	nanos, err := toNanos(amount)
	if err == nil && nanos <= 0 {
		err = errors.New("a top-up must be positive")
	}
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("top up org %s: %w", orgID, err)
	}
	var e LedgerEntry
	err = s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		var err error
		e, err = appendLedger(tx, orgID, LedgerTopup, nanos, nil, reason, time.Now())
		return err
	})
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("top up org %s: %w", orgID, err)
	}
	return e, nil
}

// Balance is the org's credit in USD: the sum of its ledger entries.
func (s *BoltStore) Balance(orgID string) (float64, error) {
	var nanos int64
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return ErrNotFound
		}
		nanos = readBalance(tx.Bucket(bucketBalances), orgID)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("balance of org %s: %w", orgID, err)
	}
	return fromNanos(nanos), nil
}

// LedgerEntries lists the org's ledger entries newest first, the charges
// of every call recorded before it is asked for included.
func (s *BoltStore) LedgerEntries(orgID string, p PageQuery) (Page[LedgerEntry], error) {
	s.rec.wait()
	page, err := listIndexed[LedgerEntry](s, bucketLedgerByOrg, bucketLedger, indexPrefix(orgID), p)
	if err != nil {
		return Page[LedgerEntry]{}, fmt.Errorf("list ledger of org %s: %w", orgID, err)
	}
	return page, nil
}

// listIndexed reads one page of the records an index lists under prefix,
// newest first, in one read transaction.
func listIndexed[T any](s *BoltStore, index, records []byte, prefix []byte, p PageQuery) (Page[T], error) {
	page := Page[T]{Object: ObjectList}
	err := s.db.View(func(tx *bolt.Tx) error {
		ids, err := pageIndex(tx.Bucket(index), prefix, p)
		if err != nil {
			return err
		}
		page.Data, err = loadPage[T](tx.Bucket(records), &ids)
		page.HasMore, page.NextCursor = ids.hasMore, ids.next
		return err
	})
	return page, err
}

// appendLedgerEntry appends e as encoding/json would encode it.
func appendLedgerEntry(b []byte, e *LedgerEntry) []byte {
	b = append(b, `{"id":`...)
	b = translate.AppendJSONString(b, e.ID)
	b = append(b, `,"object":`...)
	b = translate.AppendJSONString(b, e.Object)
	b = append(b, `,"org_id":`...)
	b = translate.AppendJSONString(b, e.OrgID)
	b = append(b, `,"kind":`...)
	b = translate.AppendJSONString(b, e.Kind)
	b = append(b, `,"amount_usd":`...)
	b = strconv.AppendFloat(b, e.AmountUSD, 'g', -1, 64)
	b = append(b, `,"call_id":`...)
	if e.CallID == nil {
		b = append(b, "null"...)
	} else {
		b = translate.AppendJSONString(b, *e.CallID)
	}
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b = translate.AppendJSONString(b, e.Reason)
	}
	b = append(b, `,"created_at":"`...)
	b = e.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}
