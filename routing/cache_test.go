package routing

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// body returns a body whose entry counts exactly n bytes under a 6-byte key.
func body(n int) []byte { return bytes.Repeat([]byte("x"), n-6-cacheEntryOverhead) }

func TestCacheEvictsBySize(t *testing.T) {
	c := &Cache{MaxBytes: 8000, TTL: time.Hour}
	for i := range 8 {
		c.Put(fmt.Sprintf("fp_c_%d", i), body(1000), t0)
	}
	if c.Len() != 8 || c.Bytes() != 8000 {
		t.Fatalf("%d entries, %d bytes", c.Len(), c.Bytes())
	}
	// Using fp_c_0 makes fp_c_1 the least recently used.
	if _, ok := c.Get("fp_c_0", t0); !ok {
		t.Fatal("fp_c_0 missing")
	}
	c.Put("fp_c_8", body(1000), t0)
	if _, ok := c.Get("fp_c_1", t0); ok {
		t.Error("least recently used entry kept")
	}
	for _, k := range []string{"fp_c_0", "fp_c_2", "fp_c_8"} {
		if _, ok := c.Get(k, t0); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.Bytes() > 8000 {
		t.Errorf("%d bytes held", c.Bytes())
	}
	// Replacing a key counts its size once.
	c.Put("fp_c_8", body(500), t0)
	if c.Bytes() != 7500 {
		t.Errorf("%d bytes after replacing", c.Bytes())
	}
}

func TestCacheOversized(t *testing.T) {
	c := &Cache{MaxBytes: 8000}
	c.Put("fp_c_a", body(1000), t0)
	c.Put("fp_c_b", body(1001), t0)
	if _, ok := c.Get("fp_c_b", t0); ok {
		t.Error("body over MaxBytes/8 stored")
	}
	if _, ok := c.Get("fp_c_a", t0); !ok || c.Len() != 1 {
		t.Error("an oversized put changed the cache")
	}
}

func TestCacheTTL(t *testing.T) {
	c := &Cache{MaxBytes: 1 << 20, TTL: time.Minute}
	c.Put("old", []byte("a"), t0)
	c.Put("new", []byte("b"), t0.Add(30*time.Second))
	if b, ok := c.Get("old", t0.Add(time.Minute-1)); !ok || string(b) != "a" {
		t.Fatal("fresh entry missing")
	}
	if _, ok := c.Get("old", t0.Add(time.Minute)); ok {
		t.Error("expired entry served")
	}
	if c.Len() != 1 {
		t.Errorf("expired entry kept after a miss: %d entries", c.Len())
	}
	// Expired entries at the cold end go when a body is put.
	c.Put("newer", []byte("c"), t0.Add(2*time.Minute))
	if c.Len() != 1 {
		t.Errorf("%d entries, want only the newest", c.Len())
	}
}

func TestCacheCopiesBody(t *testing.T) {
	c := &Cache{}
	b := []byte("answer")
	c.Put("k", b, t0)
	b[0] = 'X'
	if got, _ := c.Get("k", t0); string(got) != "answer" {
		t.Errorf("cached body changed with the caller's buffer: %q", got)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := &Cache{MaxBytes: 50_000}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint("fp_c_", (i*7+w)%300)
				if _, ok := c.Get(k, t0); !ok {
					c.Put(k, bytes.Repeat([]byte{'a'}, i%500), t0)
				}
			}
		})
	}
	wg.Wait()
	if c.Bytes() > 50_000 {
		t.Errorf("%d bytes held", c.Bytes())
	}
}
