package reliability

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// ErrInsufficientCredit is returned by Reserve when the org's available
// credit does not cover what a call may cost.
var ErrInsufficientCredit = errors.New("insufficient credit")

// CreditError says what a refused reservation needed and what the org had;
// it wraps ErrInsufficientCredit.
type CreditError struct {
	// NeedUSD is the worst-case cost of the call.
	NeedUSD float64
	// AvailableUSD is the balance less the reservations of calls in flight
	// and the charges not yet committed, above the org's floor.
	AvailableUSD float64
	// CreditUSD is the same figure not counted from the floor (it is
	// negative in an overdraft): what an auto top-up's threshold is
	// compared with.
	CreditUSD float64
}

func (e *CreditError) Error() string {
	return fmt.Sprintf("%s: the call needs up to %.6f USD, %.6f USD available", ErrInsufficientCredit, e.NeedUSD, e.AvailableUSD)
}

func (e *CreditError) Unwrap() error { return ErrInsufficientCredit }

// creditBook holds, per org, the credit promised to calls in flight
// (reservations) and the charges handed to the call writer that a reader
// of the store cannot see yet. With the committed balance they give the
// credit still available:
//
//	available = balance - unseen charges - reservations - floor
//
// A charge is queued from RecordCall until the writer's transaction takes
// it; it is then in flight under that transaction's id until a reader's
// snapshot is at least that transaction, when the balance it reads holds
// the charge. So every figure is exact for the snapshot it was read from:
// a charge is counted once, never twice and never not at all. A
// reservation is taken under the org's lock against that figure, so no
// interleaving of concurrent calls can promise more than is there.
//
// The book is in memory: bbolt is one process by construction, and every
// charge of this store passes through it.
type creditBook struct {
	orgs sync.Map // org id -> *orgCredit
}

// orgCredit is one org's share of the book, in nano-USD, guarded by mu.
type orgCredit struct {
	mu       sync.Mutex
	reserved int64
	// queued are the charges of calls queued to the writer and not yet
	// in a transaction.
	queued int64
	// inflight are charges written by a transaction that readers may not
	// see yet.
	inflight []txCharge
}

// txCharge is a charge written in the write transaction txid.
type txCharge struct {
	txid  int
	nanos int64
}

func (b *creditBook) org(orgID string) *orgCredit {
	if v, ok := b.orgs.Load(orgID); ok {
		return v.(*orgCredit)
	}
	v, _ := b.orgs.LoadOrStore(orgID, new(orgCredit))
	return v.(*orgCredit)
}

// queued notes the charge of a call handed to the writer.
func (b *creditBook) queued(p *pendingCall) {
	if p.charge > 0 {
		oc := b.org(p.orgID)
		oc.mu.Lock()
		oc.queued += p.charge
		oc.mu.Unlock()
	}
}

// dropped notes charges that will never be written: the writer gave their
// calls up.
func (b *creditBook) dropped(calls []*pendingCall) {
	for _, p := range calls {
		if p.charge > 0 {
			oc := b.org(p.orgID)
			oc.mu.Lock()
			oc.queued -= p.charge
			oc.mu.Unlock()
		}
	}
}

// writing moves the charges of calls from queued to the write transaction
// txid, which is about to commit. It runs inside that transaction, so no
// reader can see the charges in the balance yet.
//
// Charges of earlier transactions are forgotten here too: write
// transactions run one after another, so every earlier one has committed,
// and a reader takes the org's lock before it opens its snapshot, so no
// reader after this one can have a snapshot without them. An org whose
// balance no one reads thus holds one transaction's charges at most.
func (b *creditBook) writing(calls []*pendingCall, txid int) {
	for _, p := range calls {
		if p.charge > 0 {
			oc := b.org(p.orgID)
			oc.mu.Lock()
			oc.queued -= p.charge
			oc.inflight = append(pruneBefore(oc.inflight, txid), txCharge{txid: txid, nanos: p.charge})
			oc.mu.Unlock()
		}
	}
}

// pruneBefore drops the charges of transactions before txid.
func pruneBefore(in []txCharge, txid int) []txCharge {
	kept := in[:0]
	for _, c := range in {
		if c.txid >= txid {
			kept = append(kept, c)
		}
	}
	clear(in[len(kept):])
	return kept
}

// unwritten undoes writing for a transaction that did not commit: its
// charges are queued again, for the retry.
func (b *creditBook) unwritten(calls []*pendingCall, txid int) {
	for _, p := range calls {
		if p.charge <= 0 {
			continue
		}
		oc := b.org(p.orgID)
		oc.mu.Lock()
		for i, c := range oc.inflight {
			if c.txid == txid && c.nanos == p.charge {
				oc.inflight = append(oc.inflight[:i], oc.inflight[i+1:]...)
				oc.queued += p.charge
				break
			}
		}
		oc.mu.Unlock()
	}
}

// unseen is what oc's charges take from a balance read in a snapshot of
// transaction id snap; charges that snapshot holds are forgotten, since
// every later snapshot holds them too. Call with oc.mu held.
func (oc *orgCredit) unseen(snap int) int64 {
	n := oc.queued
	kept := oc.inflight[:0]
	for _, c := range oc.inflight {
		if c.txid > snap {
			n += c.nanos
			kept = append(kept, c)
		}
	}
	clear(oc.inflight[len(kept):])
	oc.inflight = kept
	return n
}

// Reservation is credit held for one call in flight. Settle it with the
// call's record (RecordCall with ChargeUSD) and then Release it; a call
// that is not charged only releases it. Release is idempotent.
type Reservation struct {
	oc    *orgCredit
	nanos int64
	done  atomic.Bool
	// linked is the call's hold on its key's budget, released with this
	// one (see Link).
	linked *KeyReservation
	// left is the org's credit once this was held: the balance less what
	// calls in flight hold, this one included (Available's figure).
	left int64
}

// LeftUSD is the org's available credit, in USD, once this reservation
// was taken: what an auto top-up's threshold is compared with.
func (r *Reservation) LeftUSD() float64 {
	if r == nil {
		return 0
	}
	return fromNanos(r.left)
}

// USD is the amount reserved.
func (r *Reservation) USD() float64 {
	if r == nil {
		return 0
	}
	return fromNanos(r.nanos)
}

// Release gives the reserved credit back to the org. Record the call's
// charge first: released before its charge is queued, the credit would
// briefly look free to other calls.
func (r *Reservation) Release() {
	if r == nil || r.done.Swap(true) {
		return
	}
	r.oc.mu.Lock()
	r.oc.reserved -= r.nanos
	r.oc.mu.Unlock()
	r.linked.Release()
}

// Reserve holds needUSD of the org's credit for a call, or fails with a
// *CreditError when the balance, less what calls in flight hold and what is
// charged but not yet committed, would fall below -overdraftUSD. A need of
// zero reserves nothing and only checks that the org is above its floor.
func (s *BoltStore) Reserve(orgID string, needUSD, overdraftUSD float64) (*Reservation, error) {
	need, err := toNanos(needUSD)
	if err == nil && need < 0 {
		err = errors.New("a reservation cannot be negative")
	}
	floor, ferr := toNanos(-overdraftUSD)
	if err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("reserve credit of org %s: %w", orgID, err)
	}
	if floor > 0 {
		floor = 0
	}
	oc := s.credit.org(orgID)
	oc.mu.Lock()
	defer oc.mu.Unlock()
	bal, unseen, err := s.creditOf(orgID, oc)
	if err != nil {
		return nil, fmt.Errorf("reserve credit of org %s: %w", orgID, err)
	}
	avail := bal - unseen - oc.reserved - floor
	if avail <= 0 || avail < need {
		return nil, &CreditError{NeedUSD: fromNanos(need), AvailableUSD: fromNanos(max(avail, 0)), CreditUSD: fromNanos(avail + floor)}
	}
	oc.reserved += need
	return &Reservation{oc: oc, nanos: need, left: avail + floor - need}, nil
}

// Available is the org's balance less reservations and charges not yet
// committed, and the part of it held by reservations, in USD.
func (s *BoltStore) Available(orgID string) (available, reserved float64, err error) {
	oc := s.credit.org(orgID)
	oc.mu.Lock()
	defer oc.mu.Unlock()
	bal, unseen, err := s.creditOf(orgID, oc)
	if err != nil {
		return 0, 0, fmt.Errorf("available credit of org %s: %w", orgID, err)
	}
	return fromNanos(bal - unseen - oc.reserved), fromNanos(oc.reserved), nil
}

// creditOf reads the org's committed balance and what charges its snapshot
// does not hold yet. Call with oc.mu held.
func (s *BoltStore) creditOf(orgID string, oc *orgCredit) (balance, unseen int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(orgID)) == nil {
			return fmt.Errorf("org %s: %w", orgID, ErrNotFound)
		}
		balance = readBalance(tx.Bucket(bucketBalances), orgID)
		unseen = oc.unseen(tx.ID())
		return nil
	})
	return balance, unseen, err
}
