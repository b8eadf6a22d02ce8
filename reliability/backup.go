package reliability

import (
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the store while it stays in use. It
// first commits the call records still queued, then copies the file from
// one read transaction (bbolt's hot backup): writers go on committing and
// the copy is the store as of that transaction. open is called once, with
// the copy's size in bytes, before the first byte is written, and returns
// where the copy goes. The copy is a bbolt file that OpenBolt opens like
// the store itself. Backup returns the bytes written.
func (s *BoltStore) Backup(open func(size int64) io.Writer) (int64, error) {
	if err := s.Sync(); err != nil {
		return 0, fmt.Errorf("back up store: %w", err)
	}
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(open(tx.Size()))
		return err
	})
	if err != nil {
		return n, fmt.Errorf("back up store %s: %w", s.db.Path(), err)
	}
	return n, nil
}
