package reliability

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// idTime decodes the timestamp of an id made by NewID.
func idTime(t *testing.T, id, prefix string) time.Time {
	t.Helper()
	body := strings.TrimPrefix(id, prefix)
	var hi, lo uint64
	for _, c := range []byte(body) {
		d := strings.IndexByte(idAlphabet, c)
		if d < 0 {
			t.Fatalf("id %q: %q is not in the alphabet", id, c)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	return time.UnixMilli(int64(hi >> 16))
}

func TestNewIDFormat(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	id := NewID("op_")
	after := time.Now().Add(time.Millisecond)
	if !strings.HasPrefix(id, "op_") || len(id) != len("op_")+idLen {
		t.Fatalf("NewID = %q, want op_ and %d characters", id, idLen)
	}
	body := id[len("op_"):]
	for _, c := range []byte(body) {
		if !strings.ContainsRune(idAlphabet, rune(c)) {
			t.Fatalf("NewID = %q: %q is not lowercase base32", id, c)
		}
	}
	// 26 digits carry 130 bits: the first digit only holds the top 3.
	if body[0] > '7' {
		t.Fatalf("NewID = %q: first digit above 7 overflows 128 bits", id)
	}
	if ts := idTime(t, id, "op_"); ts.Before(before) || ts.After(after) {
		t.Fatalf("NewID timestamp %v not within [%v, %v]", ts, before, after)
	}
}

func TestNewIDConcurrentUniqueAndOrdered(t *testing.T) {
	const goroutines, perGoroutine = 8, 10000
	results := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, perGoroutine)
			for i := range ids {
				ids[i] = NewID("chatcmpl-")
			}
			results[g] = ids
		}()
	}
	wg.Wait()

	seen := make(map[string]bool, goroutines*perGoroutine)
	for g, ids := range results {
		if !slices.IsSorted(ids) {
			t.Fatalf("goroutine %d: ids made later do not sort later", g)
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
	}
}

func TestNewIDCreationOrderIsByteOrder(t *testing.T) {
	// Ids appended under one lock are in creation order across goroutines:
	// that order must be their byte order too.
	var (
		mu  sync.Mutex
		ids []string
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10000 {
				mu.Lock()
				ids = append(ids, NewID("msg_"))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if !slices.IsSorted(ids) {
		t.Fatal("ids are not in creation order")
	}
	if len(slices.Compact(ids)) != 80000 {
		t.Fatal("ids are not unique")
	}
}

func TestIncrement(t *testing.T) {
	b := []byte{0x00, 0xff}
	if !increment(b) || b[0] != 1 || b[1] != 0 {
		t.Fatalf("increment carried wrong: %x", b)
	}
	b = []byte{0xff, 0xff}
	if increment(b) {
		t.Fatal("increment of all ones reported no overflow")
	}
}
