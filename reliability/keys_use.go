package reliability

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketKeyLastUsed maps a key id to when it was last used, as Unix
// nanoseconds (8 bytes, big-endian); config keys have entries too.
var bucketKeyLastUsed = []byte("key_last_used")

// KeyUseInterval is how stale the stored "last used" time of a key may be:
// a use is written only when it is at least this much later than the time
// already written for the key. The exact time is kept in memory, so lists
// of this process show it; a restart loses at most this much of it.
const KeyUseInterval = time.Minute

// keyUse tracks when each key was last used without a store write per
// request: TouchKey updates memory only, and a key whose stored time is
// KeyUseInterval or more behind is marked dirty. Dirty keys are written by
// the next commit of the call writer (which runs anyway while calls are
// made), by the next change to a key, and when the store closes.
type keyUse struct {
	entries sync.Map // key id -> *keyUseEntry
	mu      sync.Mutex
	dirty   []*keyUseEntry
}

// keyUseEntry is one key's use, in Unix nanoseconds.
type keyUseEntry struct {
	id     string
	at     atomic.Int64 // the latest use seen
	stored atomic.Int64 // the latest use written to the store
	dirty  atomic.Bool
}

// TouchKey notes that the key with this id (a stored or a config key)
// authenticated a request at time at. It costs no store write: see
// KeyUseInterval.
func (s *BoltStore) TouchKey(id string, at time.Time) {
	if id == "" {
		return
	}
	v, ok := s.keys.use.entries.Load(id)
	if !ok {
		v, _ = s.keys.use.entries.LoadOrStore(id, &keyUseEntry{id: id})
	}
	e := v.(*keyUseEntry)
	n := at.UnixNano()
	for {
		cur := e.at.Load()
		if n <= cur || e.at.CompareAndSwap(cur, n) {
			break
		}
	}
	if n-e.stored.Load() >= int64(KeyUseInterval) && !e.dirty.Swap(true) {
		s.keys.use.mu.Lock()
		s.keys.use.dirty = append(s.keys.use.dirty, e)
		s.keys.use.mu.Unlock()
	}
}

// take removes and returns the dirty entries, for a commit to write.
func (u *keyUse) take() []*keyUseEntry {
	u.mu.Lock()
	defer u.mu.Unlock()
	d := u.dirty
	u.dirty = nil
	return d
}

// putBack returns entries a failed commit did not write.
func (u *keyUse) putBack(es []*keyUseEntry) {
	if len(es) == 0 {
		return
	}
	u.mu.Lock()
	u.dirty = append(u.dirty, es...)
	u.mu.Unlock()
}

// writeKeyUse writes the uses of es inside tx; done, called once tx has
// committed, marks them written.
func writeKeyUse(tx *bolt.Tx, es []*keyUseEntry) (done func(), err error) {
	if len(es) == 0 {
		return func() {}, nil
	}
	b := tx.Bucket(bucketKeyLastUsed)
	written := make([]int64, len(es))
	for i, e := range es {
		n := e.at.Load()
		if old := b.Get([]byte(e.id)); len(old) == 8 {
			n = max(n, int64(binary.BigEndian.Uint64(old)))
		}
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(n))
		if err := b.Put([]byte(e.id), buf[:]); err != nil {
			return nil, fmt.Errorf("write last use of key %s: %w", e.id, err)
		}
		written[i] = n
	}
	return func() {
		for i, e := range es {
			e.stored.Store(written[i])
			e.dirty.Store(false)
		}
	}, nil
}

// flushKeyUse writes the dirty uses in a transaction of their own; Close
// calls it so that a graceful stop loses none.
func (s *BoltStore) flushKeyUse() error {
	es := s.keys.use.take()
	if len(es) == 0 {
		return nil
	}
	var done func()
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		done, err = writeKeyUse(tx, es)
		return err
	})
	if err != nil {
		s.keys.use.putBack(es)
		return fmt.Errorf("write key uses: %w", err)
	}
	done()
	return nil
}

// lastUsedTx is the key's last use: the later of what this process saw and
// what the store holds (another process may have written it before a
// restart). Nil when it was never used.
func (s *BoltStore) lastUsedTx(tx *bolt.Tx, id string) *time.Time {
	var n int64
	if v, ok := s.keys.use.entries.Load(id); ok {
		n = v.(*keyUseEntry).at.Load()
	}
	if old := tx.Bucket(bucketKeyLastUsed).Get([]byte(id)); len(old) == 8 {
		n = max(n, int64(binary.BigEndian.Uint64(old)))
	}
	if n == 0 {
		return nil
	}
	t := time.Unix(0, n).UTC()
	return &t
}

// KeyLastUsed is when the key (stored or config) last authenticated a
// request, or nil if never.
func (s *BoltStore) KeyLastUsed(id string) (*time.Time, error) {
	var t *time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		t = s.lastUsedTx(tx, id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("last use of key %s: %w", id, err)
	}
	return t, nil
}
