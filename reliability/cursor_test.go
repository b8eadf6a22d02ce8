package reliability

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestSortPositionOrdersByTimeThenID(t *testing.T) {
	times := []time.Time{
		time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, -1),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	var keys [][]byte
	for _, at := range times {
		// Ids that sort against time must not change the order.
		keys = append(keys, sortPosition(at, "resp_1"), sortPosition(at, "resp_2"))
	}
	if !slices.IsSortedFunc(keys, bytes.Compare) {
		t.Fatal("sort positions are not in time order")
	}
	if bytes.Compare(sortPosition(times[4], "resp_1"), sortPosition(times[5], "chatcmpl-1")) >= 0 {
		t.Fatal("the id prefix outweighs the time")
	}
}

func TestCursorRoundTrip(t *testing.T) {
	pos := sortPosition(time.Now(), "chatcmpl-abc")
	got, err := decodeCursor(encodeCursor(pos))
	if err != nil || !bytes.Equal(got, pos) {
		t.Fatalf("decodeCursor(encodeCursor(pos)) = %x, %v; want %x", got, err, pos)
	}
	for _, bad := range []string{"", "a", "!!!!", "AAAAAAAAAAA", "AAAA=AAAAAAAA"} {
		if _, err := decodeCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("decodeCursor(%q): %v, want ErrBadCursor", bad, err)
		}
	}
}

func TestPageIndexSkipsLongerPrefixes(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "index.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("index"))
		if err != nil {
			return err
		}
		entries := []struct{ org, op, id string }{
			{"org", "op", "call_1"},
			{"org", "op\x00y", "call_2"},
			{"org", "op", "call_3"},
			{"org", "op\x00", "call_4"},
			{"org2", "op", "call_5"},
		}
		for i, e := range entries {
			k := indexKey(indexPrefix(e.org, e.op), at.Add(time.Duration(i)*time.Second), e.id)
			if err := b.Put(k, []byte(e.id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		page, err := pageIndex(tx.Bucket([]byte("index")), indexPrefix("org", "op"), PageQuery{Limit: 1})
		if err != nil {
			return err
		}
		if !slices.Equal(page.ids, []string{"call_3"}) || !page.hasMore {
			t.Fatalf("first page = %+v", page)
		}
		page, err = pageIndex(tx.Bucket([]byte("index")), indexPrefix("org", "op"), PageQuery{Limit: 1, Cursor: *page.next})
		if err != nil {
			return err
		}
		if !slices.Equal(page.ids, []string{"call_1"}) || page.hasMore || page.next != nil {
			t.Fatalf("second page = %+v", page)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(sortPosition(time.Now(), "chatcmpl-1")))
	f.Add("")
	f.Add("////")
	f.Fuzz(func(t *testing.T, cursor string) {
		pos, err := decodeCursor(cursor)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("decodeCursor(%q) failed without ErrBadCursor: %v", cursor, err)
			}
			return
		}
		if len(pos) <= sortTimeLen || len(pos) > maxCursorLen {
			t.Fatalf("decodeCursor(%q) accepted %d bytes", cursor, len(pos))
		}
	})
}
