package reliability

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketKeySpend counts what each key's calls were charged per UTC day and
// month: key id | 0x00 | period ("d2006-01-02" or "m2006-01") -> nano-USD
// (8 bytes, big-endian). The call writer adds to it in the transaction
// that writes the charge, so the count never drifts from the ledger.
var bucketKeySpend = []byte("key_spend")

// keySpendDays is how long the daily counts are kept; monthly ones stay.
const keySpendDays = 40

// KeyBudget caps what one key's calls may cost, per UTC calendar day and
// per UTC calendar month. Zero means no cap for that period.
type KeyBudget struct {
	// DayUSD caps the spend of one UTC day.
	DayUSD float64 `json:"day_usd,omitempty"`
	// MonthUSD caps the spend of one UTC month.
	MonthUSD float64 `json:"month_usd,omitempty"`
}

// ErrBudgetExceeded is returned by ReserveKeyBudget when a call could take
// the key past its budget.
var ErrBudgetExceeded = errors.New("key budget exceeded")

// BudgetError says which of a key's budgets refused a call; it wraps
// ErrBudgetExceeded.
type BudgetError struct {
	// KeyID is the key.
	KeyID string
	// Period is "day" or "month".
	Period string
	// LimitUSD is the key's budget for that period.
	LimitUSD float64
	// SpentUSD is what the key's calls were charged in the period, those
	// not yet committed included.
	SpentUSD float64
	// ReservedUSD is what the key's calls in flight hold.
	ReservedUSD float64
	// NeedUSD is the call's worst-case cost.
	NeedUSD float64
	// ResetsAt is when the period ends and the budget is whole again.
	ResetsAt time.Time
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s: key %s has a budget of %.6f USD per %s; %.6f USD spent and %.6f USD held by calls in flight, the call needs up to %.6f USD",
		ErrBudgetExceeded, e.KeyID, e.LimitUSD, e.Period, e.SpentUSD, e.ReservedUSD, e.NeedUSD)
}

func (e *BudgetError) Unwrap() error { return ErrBudgetExceeded }

// spendPeriods names the UTC day and month of t as bucketKeySpend does.
func spendPeriods(t time.Time) (day, month string) {
	u := t.UTC()
	return "d" + u.Format("2006-01-02"), "m" + u.Format("2006-01")
}

// keySpendKey is the bucketKeySpend key of a key's period.
func keySpendKey(keyID, period string) []byte {
	return append(append(append(make([]byte, 0, len(keyID)+1+len(period)), keyID...), 0), period...)
}

// readSpend is a bucketKeySpend value; an absent one is 0.
func readSpend(b *bolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// keySpendBook is the per-key counterpart of creditBook: per key and
// period, what calls in flight hold (reservations) and the charges handed
// to the call writer that a reader of bucketKeySpend cannot see yet. A
// charge is queued from RecordCall until the writer's transaction takes
// it, then in flight under that transaction's id until a reader's snapshot
// holds it; so, with the committed count, every figure is exact for the
// snapshot it was read from, and a reservation taken under the key's lock
// against it never lets the key's calls cost more than its budget.
type keySpendBook struct {
	keys sync.Map // key id -> *keyAccount
}

// keyAccount is one key's share of the book, in nano-USD by period,
// guarded by mu. Periods with nothing in them are removed from the maps.
type keyAccount struct {
	mu       sync.Mutex
	reserved map[string]int64
	queued   map[string]int64
	inflight []keyTxCharge
}

// keyTxCharge is a charge of a key written in the write transaction txid.
type keyTxCharge struct {
	txid       int
	day, month string
	nanos      int64
}

func (b *keySpendBook) account(keyID string) *keyAccount {
	if v, ok := b.keys.Load(keyID); ok {
		return v.(*keyAccount)
	}
	v, _ := b.keys.LoadOrStore(keyID, &keyAccount{reserved: map[string]int64{}, queued: map[string]int64{}})
	return v.(*keyAccount)
}

// add adds n to m[k], removing the entry when it comes to zero.
func add(m map[string]int64, k string, n int64) {
	if v := m[k] + n; v != 0 {
		m[k] = v
	} else {
		delete(m, k)
	}
}

// charged calls fn with the account and periods of each charged call of
// a key.
func (b *keySpendBook) charged(calls []*pendingCall, fn func(ka *keyAccount, p *pendingCall, day, month string)) {
	for _, p := range calls {
		if p.keyID == "" || p.charge <= 0 {
			continue
		}
		day, month := spendPeriods(p.created)
		ka := b.account(p.keyID)
		ka.mu.Lock()
		fn(ka, p, day, month)
		ka.mu.Unlock()
	}
}

// queued notes the charge of a call handed to the writer.
func (b *keySpendBook) queued(p *pendingCall) {
	b.charged([]*pendingCall{p}, func(ka *keyAccount, p *pendingCall, day, month string) {
		add(ka.queued, day, p.charge)
		add(ka.queued, month, p.charge)
	})
}

// dropped notes charges that will never be written.
func (b *keySpendBook) dropped(calls []*pendingCall) {
	b.charged(calls, func(ka *keyAccount, p *pendingCall, day, month string) {
		add(ka.queued, day, -p.charge)
		add(ka.queued, month, -p.charge)
	})
}

// writing moves the charges of calls from queued to the write transaction
// txid, from inside that transaction. As creditBook.writing does, it
// forgets the charges of earlier transactions, which every later reader's
// snapshot holds, so a key whose spend no one reads keeps one
// transaction's charges at most.
func (b *keySpendBook) writing(calls []*pendingCall, txid int) {
	b.charged(calls, func(ka *keyAccount, p *pendingCall, day, month string) {
		add(ka.queued, day, -p.charge)
		add(ka.queued, month, -p.charge)
		kept := ka.inflight[:0]
		for _, c := range ka.inflight {
			if c.txid >= txid {
				kept = append(kept, c)
			}
		}
		clear(ka.inflight[len(kept):])
		ka.inflight = append(kept, keyTxCharge{txid: txid, day: day, month: month, nanos: p.charge})
	})
}

// unwritten undoes writing for a transaction that did not commit.
func (b *keySpendBook) unwritten(calls []*pendingCall, txid int) {
	b.charged(calls, func(ka *keyAccount, p *pendingCall, day, month string) {
		for i, c := range ka.inflight {
			if c.txid == txid && c.nanos == p.charge && c.day == day {
				ka.inflight = append(ka.inflight[:i], ka.inflight[i+1:]...)
				add(ka.queued, day, p.charge)
				add(ka.queued, month, p.charge)
				break
			}
		}
	})
}

// unseen is what ka's charges add to the counts of day and month read in
// a snapshot of transaction id snap; charges that snapshot holds are
// forgotten. Call with ka.mu held.
func (ka *keyAccount) unseen(snap int, day, month string) (d, m int64) {
	d, m = ka.queued[day], ka.queued[month]
	kept := ka.inflight[:0]
	for _, c := range ka.inflight {
		if c.txid <= snap {
			continue
		}
		kept = append(kept, c)
		if c.day == day {
			d += c.nanos
		}
		if c.month == month {
			m += c.nanos
		}
	}
	clear(ka.inflight[len(kept):])
	ka.inflight = kept
	return d, m
}

// spentTx reads the key's committed spend of day and month and adds what
// ka's book holds beyond that snapshot. Call with ka.mu held.
func (ka *keyAccount) spentTx(tx *bolt.Tx, keyID, day, month string) (d, m int64) {
	b := tx.Bucket(bucketKeySpend)
	ud, um := ka.unseen(tx.ID(), day, month)
	return readSpend(b, keySpendKey(keyID, day)) + ud, readSpend(b, keySpendKey(keyID, month)) + um
}

// KeySpend is what the key's calls cost in the UTC day and month of at,
// charges queued to the writer included.
func (s *BoltStore) KeySpend(keyID string, at time.Time) (dayUSD, monthUSD float64, err error) {
	day, month := spendPeriods(at)
	ka := s.keys.spend.account(keyID)
	ka.mu.Lock()
	defer ka.mu.Unlock()
	d, m, err := s.spent(ka, keyID, day, month)
	if err != nil {
		return 0, 0, fmt.Errorf("spend of key %s: %w", keyID, err)
	}
	return fromNanos(d), fromNanos(m), nil
}

// spent reads the key's spend of day and month in a snapshot of its own,
// charges ka's book holds beyond it included. Call with ka.mu held, so that
// the snapshot is opened after the lock (see creditBook.writing).
func (s *BoltStore) spent(ka *keyAccount, keyID, day, month string) (d, m int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		d, m = ka.spentTx(tx, keyID, day, month)
		return nil
	})
	return d, m, err
}

// KeyReservation is budget held for one call of a key. Link it to the
// call's credit Reservation, whose Release then releases both; Release is
// idempotent.
type KeyReservation struct {
	ka         *keyAccount
	day, month string // the periods held; "" for a period without a cap
	nanos      int64
	done       atomic.Bool
}

// Release gives the held budget back to the key.
func (r *KeyReservation) Release() {
	if r == nil || r.done.Swap(true) {
		return
	}
	r.ka.mu.Lock()
	if r.day != "" {
		add(r.ka.reserved, r.day, -r.nanos)
	}
	if r.month != "" {
		add(r.ka.reserved, r.month, -r.nanos)
	}
	r.ka.mu.Unlock()
}

// ReserveKeyBudget holds needUSD of the key's budget for a call made at
// time at (the UTC day and month of at are the periods charged), or fails
// with a *BudgetError when what the key's calls were charged in the period,
// those not yet committed and those in flight, plus needUSD, would pass
// its cap. A budget without caps reserves nothing and returns nil. The
// key's charges are counted from the records of its calls (Call.KeyID and
// ChargeUSD), in the transaction that writes them.
func (s *BoltStore) ReserveKeyBudget(keyID string, b KeyBudget, needUSD float64, at time.Time) (*KeyReservation, error) {
	if b.DayUSD <= 0 && b.MonthUSD <= 0 {
		return nil, nil
	}
	need, err := toNanos(needUSD)
	if err == nil && need < 0 {
		err = errors.New("a reservation cannot be negative")
	}
	dayCap, derr := toNanos(b.DayUSD)
	monthCap, merr := toNanos(b.MonthUSD)
	if err = errors.Join(err, derr, merr); err != nil {
		return nil, fmt.Errorf("reserve budget of key %s: %w", keyID, err)
	}
	day, month := spendPeriods(at)
	ka := s.keys.spend.account(keyID)
	ka.mu.Lock()
	defer ka.mu.Unlock()
	spentDay, spentMonth, err := s.spent(ka, keyID, day, month)
	if err != nil {
		return nil, fmt.Errorf("reserve budget of key %s: %w", keyID, err)
	}
	r := &KeyReservation{ka: ka, nanos: need}
	u := at.UTC()
	for _, p := range []struct {
		name         string
		key          string
		limit, spent int64
		hold         *string
		resets       time.Time
	}{
		{"day", day, dayCap, spentDay, &r.day, time.Date(u.Year(), u.Month(), u.Day()+1, 0, 0, 0, 0, time.UTC)},
		{"month", month, monthCap, spentMonth, &r.month, time.Date(u.Year(), u.Month()+1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if p.limit <= 0 {
			continue
		}
		held := ka.reserved[p.key]
		if left := p.limit - p.spent - held; left <= 0 || left < need {
			return nil, &BudgetError{KeyID: keyID, Period: p.name, LimitUSD: fromNanos(p.limit), SpentUSD: fromNanos(p.spent),
				ReservedUSD: fromNanos(held), NeedUSD: fromNanos(need), ResetsAt: p.resets}
		}
		*p.hold = p.key
	}
	if r.day != "" {
		add(ka.reserved, r.day, need)
	}
	if r.month != "" {
		add(ka.reserved, r.month, need)
	}
	return r, nil
}

// Link makes Release of r release k too, so that a call's credit and its
// key's budget are held and given back together. It must be called before
// r is shared. A nil k links nothing.
func (r *Reservation) Link(k *KeyReservation) {
	if r != nil && k != nil {
		r.linked = k
	}
}

// keySpendTx adds the charges of a commit's calls to bucketKeySpend; like
// ledgerTx's balances, each count is read and written once per commit.
type keySpendTx struct {
	b      *bolt.Bucket
	deltas []keySpendDelta
}

// keySpendDelta is a change to one count not yet written.
type keySpendDelta struct {
	key   string
	nanos int64
}

func newKeySpendTx(tx *bolt.Tx) *keySpendTx {
	return &keySpendTx{b: tx.Bucket(bucketKeySpend)}
}

// add counts a charge of nanos to the key in the day and month of at.
func (k *keySpendTx) add(keyID string, at time.Time, nanos int64) {
	if keyID == "" || nanos <= 0 {
		return
	}
	day, month := spendPeriods(at)
next:
	for _, key := range []string{string(keySpendKey(keyID, day)), string(keySpendKey(keyID, month))} {
		for i := range k.deltas {
			if k.deltas[i].key == key {
				k.deltas[i].nanos += nanos
				continue next
			}
		}
		k.deltas = append(k.deltas, keySpendDelta{key: key, nanos: nanos})
	}
}

// flush writes the counts changed since the last flush. A key's first
// count of a day also removes its daily counts older than keySpendDays.
func (k *keySpendTx) flush() error {
	for _, d := range k.deltas {
		key := []byte(d.key)
		old := k.b.Get(key)
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(readSpend(k.b, key)+d.nanos))
		if err := k.b.Put(key, buf[:]); err != nil {
			return fmt.Errorf("update key spend: %w", err)
		}
		if old == nil {
			if err := k.pruneDays(key); err != nil {
				return err
			}
		}
	}
	clear(k.deltas)
	k.deltas = k.deltas[:0]
	return nil
}

// pruneDays removes the daily counts of key's key id that are older than
// keySpendDays before key's own day; key is a daily or monthly count.
func (k *keySpendTx) pruneDays(key []byte) error {
	sep := bytes.IndexByte(key, 0)
	if sep < 0 || len(key) <= sep+1 || key[sep+1] != 'd' {
		return nil
	}
	day, err := time.Parse("2006-01-02", string(key[sep+2:]))
	if err != nil {
		return nil
	}
	first := append(bytes.Clone(key[:sep+1]), 'd')
	end := keySpendKey(string(key[:sep]), "d"+day.AddDate(0, 0, -keySpendDays).Format("2006-01-02"))
	var stale [][]byte
	c := k.b.Cursor()
	for ck, _ := c.Seek(first); ck != nil && bytes.Compare(ck, end) < 0; ck, _ = c.Next() {
		stale = append(stale, bytes.Clone(ck))
	}
	for _, sk := range stale {
		if err := k.b.Delete(sk); err != nil {
			return fmt.Errorf("prune key spend: %w", err)
		}
	}
	return nil
}
