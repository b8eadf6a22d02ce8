package reliability

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// blobPrefix keeps named blobs apart from the file's own facts in the
// meta bucket.
const blobPrefix = "blob:"

// SaveBlob stores a named blob of state that is not a record of its own,
// such as routing's gate evidence, replacing any earlier one.
func (s *BoltStore) SaveBlob(name string, b []byte) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte(blobPrefix+name), b)
	})
	if err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	return nil
}

// Blob returns the named blob; ErrNotFound when none was saved.
func (s *BoltStore) Blob(name string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get([]byte(blobPrefix + name))
		if v == nil {
			return fmt.Errorf("blob %s: %w", name, ErrNotFound)
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}
