package reliability

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// openTestStore opens a store in a fresh directory and closes it when the
// test ends.
func openTestStore(t testing.TB, opt BoltOptions) (*BoltStore, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.db")
	return reopenTestStore(t, path, opt), path
}

// reopenTestStore opens the store at path and closes it when the test ends.
func reopenTestStore(t testing.TB, path string, opt BoltOptions) *BoltStore {
	t.Helper()
	s, err := OpenBolt(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenBoltCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "llm")
	path := filepath.Join(dir, "gateway.db")
	s := reopenTestStore(t, path, BoltOptions{})
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {path, 0o600}} {
		info, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != c.mode {
			t.Errorf("%s has mode %o, want %o", c.path, got, c.mode)
		}
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return errors.New("missing bucket " + string(name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenBoltLockedFileTimesOut(t *testing.T) {
	_, path := openTestStore(t, BoltOptions{})
	const timeout = 150 * time.Millisecond
	start := time.Now()
	s, err := OpenBolt(path, BoltOptions{Timeout: timeout})
	elapsed := time.Since(start)
	if err == nil {
		_ = s.Close()
		t.Fatal("a second open of an open store succeeded")
	}
	if !errors.Is(err, berrors.ErrTimeout) {
		t.Fatalf("second open: %v, want bbolt's timeout", err)
	}
	if elapsed < timeout/2 || elapsed > 5*time.Second {
		t.Fatalf("second open gave up after %v, want about %v", elapsed, timeout)
	}
}

func TestOpenBoltRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(schemaKey, []byte("2"))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	if s, err := OpenBolt(path, BoltOptions{Timeout: time.Second}); err == nil {
		_ = s.Close()
		t.Fatal("opened a file of a newer schema")
	}
	// The refused open must have released the file.
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("file still locked after a refused open: %v", err)
	}
	_ = db.Close()
}

func TestCloseTwice(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.EnsureOrg("late"); err == nil {
		t.Fatal("EnsureOrg on a closed store succeeded")
	}
}

func TestBoltOptionsDefaults(t *testing.T) {
	o := BoltOptions{}.withDefaults()
	if o.Timeout != DefaultLockTimeout || o.BatchSize != DefaultBatchSize || o.BatchDelay != DefaultBatchDelay || o.QueueSize != DefaultQueueSize {
		t.Fatalf("defaults = %+v", o)
	}
	set := BoltOptions{Timeout: time.Second, BatchSize: 3, BatchDelay: time.Second, QueueSize: 7}
	if got := set.withDefaults(); got.Timeout != set.Timeout || got.BatchSize != 3 || got.BatchDelay != time.Second || got.QueueSize != 7 {
		t.Fatalf("withDefaults changed set fields: %+v", got)
	}
}

// TestStorePageSize: a new store packs several call records per page; a
// store made with another page size (an older file, bbolt's default) opens
// with its own and keeps its calls readable.
func TestStorePageSize(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	if got := s.db.Info().PageSize; got != storePageSize {
		t.Fatalf("new store has %d-byte pages, want %d", got, storePageSize)
	}

	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	old := reopenTestStore(t, path, BoltOptions{})
	if got := old.db.Info().PageSize; got != 4096 {
		t.Fatalf("existing store reopened with %d-byte pages, want its own 4096", got)
	}
	org, err := old.EnsureOrg("old")
	if err != nil {
		t.Fatal(err)
	}
	old.RecordCall(testCall("chatcmpl-old", org.ID, nil, time.Now().UTC()))
	if _, err := old.Call("chatcmpl-old"); err != nil {
		t.Fatal(err)
	}
}
