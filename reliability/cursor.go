package reliability

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Lists are index buckets whose keys are
//
//	prefix | created_at (8 bytes) | record id
//
// where prefix is one or more 0x00-terminated fields (an org id, then an
// operation id) and the value is the record id again. Byte order is then
// listing order: walking backwards from the end of a prefix yields the
// newest record first. The time comes before the id because call ids of
// different endpoints carry different prefixes ("chatcmpl-", "msg_",
// "resp_") and would otherwise sort by endpoint rather than by time.
//
// A page cursor is the base64url text of the time and id of the last record
// returned. It is opaque to clients and means the same thing in every list.

// sortTimeLen is the length of the time part of an index key.
const sortTimeLen = 8

// maxCursorLen bounds a decoded cursor, so a client cannot make the store
// decode and seek with an arbitrarily large key.
const maxCursorLen = sortTimeLen + 1024

// indexPrefix joins the fields that scope an index, each ended by 0x00 so
// that no field can run into the next.
func indexPrefix(fields ...string) []byte {
	n := 0
	for _, f := range fields {
		n += len(f) + 1
	}
	p := make([]byte, 0, n)
	for _, f := range fields {
		p = append(p, f...)
		p = append(p, 0)
	}
	return p
}

// sortPosition is the part of an index key after the prefix: the creation
// time, encoded so that byte order is time order (the sign bit is flipped
// so that times before 1970 still sort first), then the id.
func sortPosition(created time.Time, id string) []byte {
	pos := make([]byte, sortTimeLen, sortTimeLen+len(id))
	binary.BigEndian.PutUint64(pos, uint64(created.UnixNano())^(1<<63))
	return append(pos, id...)
}

// indexKey is the full key of one index entry.
func indexKey(prefix []byte, created time.Time, id string) []byte {
	return append(bytes.Clone(prefix), sortPosition(created, id)...)
}

// appendIndexField appends one field of an index prefix, as indexPrefix
// joins them, to b: writers that build many keys reuse one buffer.
func appendIndexField(b []byte, field string) []byte {
	return append(append(b, field...), 0)
}

// appendIndexKey appends the sort position of created and id to a prefix
// in b, giving the same key as indexKey.
func appendIndexKey(b []byte, created time.Time, id string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(created.UnixNano())^(1<<63))
	return append(b, id...)
}

// encodeCursor turns a sort position into an opaque page cursor.
func encodeCursor(pos []byte) string {
	return base64.RawURLEncoding.EncodeToString(pos)
}

// decodeCursor turns a page cursor back into a sort position.
func decodeCursor(cursor string) ([]byte, error) {
	if base64.RawURLEncoding.DecodedLen(len(cursor)) > maxCursorLen {
		return nil, fmt.Errorf("%w: too long", ErrBadCursor)
	}
	pos, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	if len(pos) <= sortTimeLen {
		return nil, fmt.Errorf("%w: too short", ErrBadCursor)
	}
	return pos, nil
}

// indexPage is one page of record ids read from an index.
type indexPage struct {
	ids []string
	// pos holds the sort position of each id, for a cursor that ends the
	// page early.
	pos     [][]byte
	hasMore bool
	next    *string
	// maxBytes bounds the stored size of the page's records.
	maxBytes int
}

// cut ends the page after its first n records, which leaves more to list.
func (p *indexPage) cut(n int) {
	p.ids, p.pos = p.ids[:n], p.pos[:n]
	p.hasMore = true
	next := encodeCursor(p.pos[n-1])
	p.next = &next
}

// pageIndex walks the entries of b under prefix from newest to oldest,
// starting after q.Cursor, and returns up to q's limit of record ids.
func pageIndex(b *bolt.Bucket, prefix []byte, q PageQuery) (indexPage, error) {
	limit, err := q.limit()
	if err != nil {
		return indexPage{}, err
	}
	// start is the first key the page must not include: the cursor's
	// position, or the first key past the prefix (prefix ends in 0x00).
	start := bytes.Clone(prefix)
	if q.Cursor != "" {
		pos, err := decodeCursor(q.Cursor)
		if err != nil {
			return indexPage{}, err
		}
		start = append(start, pos...)
	} else {
		start[len(start)-1] = 1
	}

	page := indexPage{ids: make([]string, 0, limit), pos: make([][]byte, 0, limit), maxBytes: q.MaxBytes}
	if page.maxBytes <= 0 {
		page.maxBytes = DefaultMaxPageBytes
	}
	var last []byte
	c := b.Cursor()
	k, v := c.Seek(start)
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		pos := k[len(prefix):]
		// A prefix such as "org\x00op\x00" also matches the keys of an
		// operation id "op\x00more": the value, which is the id, tells the
		// entries of this exact prefix apart from those.
		if len(pos) != sortTimeLen+len(v) || !bytes.Equal(pos[sortTimeLen:], v) {
			continue
		}
		if len(page.ids) == limit {
			page.hasMore = true
			break
		}
		page.ids = append(page.ids, string(v))
		page.pos = append(page.pos, pos)
		last = pos
	}
	if page.hasMore {
		next := encodeCursor(last)
		page.next = &next
	}
	return page, nil
}

// loadPage decodes the records a page of an index names, in page order.
// Once the records read add up to the page's byte bound, it ends the page
// there (see PageQuery.MaxBytes), so that no list answer grows with the
// size of what was recorded: a page of large calls holds fewer of them.
func loadPage[T any](records *bolt.Bucket, page *indexPage) ([]T, error) {
	out := make([]T, len(page.ids))
	size := 0
	for i, id := range page.ids {
		if data := records.Get([]byte(id)); data != nil {
			size += len(data)
			if i > 0 && size > page.maxBytes {
				page.cut(i)
				return out[:i], nil
			}
		}
		err := getJSON(records, []byte(id), &out[i])
		if errors.Is(err, ErrNotFound) {
			// Records and their index entries are written in one
			// transaction, so this is damage, not a missing record the
			// caller asked for: keep it from reading as a 404.
			return nil, fmt.Errorf("index names record %s, which is not stored", id)
		}
		if err != nil {
			return nil, fmt.Errorf("indexed record %s: %w", id, err)
		}
	}
	return out, nil
}

// newestFirst calls fn with the record id of each entry of b under prefix,
// newest first, until fn returns false or an error.
func newestFirst(b *bolt.Bucket, prefix []byte, fn func(id []byte) (more bool, err error)) error {
	start := bytes.Clone(prefix)
	start[len(start)-1] = 1
	c := b.Cursor()
	k, v := c.Seek(start)
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		more, err := fn(v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}
