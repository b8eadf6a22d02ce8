package routing

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestRateLimiterRequests(t *testing.T) {
	l := &RateLimiter{}
	// 60 a minute: a burst of 60, then one a second.
	for i := range 60 {
		if ok, _ := l.AllowRequest("org", 60, 0, t0); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, after := l.AllowRequest("org", 60, 0, t0)
	if ok || after != time.Second {
		t.Fatalf("61st request: ok %v, retry after %v (want 1s)", ok, after)
	}
	ok, after = l.AllowRequest("org", 60, 0, t0.Add(400*time.Millisecond))
	if ok || after != 600*time.Millisecond {
		t.Fatalf("after 0.4s: ok %v, retry after %v (want 0.6s)", ok, after)
	}
	if ok, _ := l.AllowRequest("org", 60, 0, t0.Add(time.Second)); !ok {
		t.Fatal("refused after the retry-after")
	}
	if ok, _ := l.AllowRequest("other", 60, 0, t0); !ok {
		t.Fatal("keys share a bucket")
	}
	// A full minute refills the burst, and no more.
	now := t0.Add(time.Hour)
	for i := range 60 {
		if ok, _ := l.AllowRequest("org", 60, 0, now); !ok {
			t.Fatalf("request %d after an idle hour refused", i)
		}
	}
	if ok, _ := l.AllowRequest("org", 60, 0, now); ok {
		t.Fatal("bucket held more than a minute's allowance")
	}
}

func TestRateLimiterTokens(t *testing.T) {
	l := &RateLimiter{}
	if ok, _ := l.AllowRequest("k", 0, 6000, t0); !ok {
		t.Fatal("first request refused")
	}
	// The call used 9000 tokens of 6000 a minute: 3000 in debt.
	l.ChargeTokens("k", 6000, 9000, t0)
	ok, after := l.AllowRequest("k", 0, 6000, t0)
	// 3001 tokens at 100 a second: 30.01s.
	if ok || after != 30010*time.Millisecond {
		t.Fatalf("in debt: ok %v, retry after %v", ok, after)
	}
	if ok, _ := l.AllowRequest("k", 0, 6000, t0.Add(after)); !ok {
		t.Fatal("refused after the retry-after")
	}
	// Both limits: the longer wait wins.
	l.ChargeTokens("k", 6000, 6000, t0.Add(after))
	for range 2 {
		l.AllowRequest("k2", 2, 6000, t0)
	}
	l.ChargeTokens("k2", 6000, 6060, t0)
	if ok, after := l.AllowRequest("k2", 2, 6000, t0); ok || after != 30*time.Second {
		t.Fatalf("both limits: ok %v, retry after %v (want the request bucket's 30s)", ok, after)
	}
	if ok, after := l.AllowRequest("k2", 2, 6000, t0.Add(30*time.Second)); !ok {
		t.Fatalf("refused after 30s: %v", after)
	}
}

func TestRateLimiterUnlimited(t *testing.T) {
	l := &RateLimiter{}
	for range 1000 {
		if ok, _ := l.AllowRequest("k", 0, 0, t0); !ok {
			t.Fatal("unlimited key refused")
		}
		l.ChargeTokens("k", 0, 1_000_000, t0)
	}
	if l.Len() != 0 {
		t.Errorf("unlimited keys tracked: %d", l.Len())
	}
	// Raising a limit from unlimited starts with a full bucket.
	if ok, _ := l.AllowRequest("k", 0, 100, t0); !ok {
		t.Fatal("first limited request refused")
	}
	if ok, _ := l.AllowRequest("k", 5, 100, t0); !ok {
		t.Fatal("a newly set rpm started empty")
	}
}

// Waiting the returned retry-after always suffices, whatever the limits.
func TestRateLimiterRetryAfterProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 5000 {
		l := &RateLimiter{}
		rpm, tpm := rng.IntN(1000), rng.IntN(1_000_000)
		now := t0
		for range 100_000 {
			ok, after := l.AllowRequest("k", rpm, tpm, now)
			if !ok {
				if after <= 0 {
					t.Fatalf("case %d: refused with retry-after %v", i, after)
				}
				if ok, again := l.AllowRequest("k", rpm, tpm, now.Add(after)); !ok {
					t.Fatalf("case %d (rpm %d tpm %d): refused again %v after waiting %v", i, rpm, tpm, again, after)
				}
				break
			}
			if tpm > 0 {
				l.ChargeTokens("k", tpm, rng.IntN(tpm/4+2), now)
			}
			now = now.Add(time.Duration(rng.IntN(int(time.Millisecond))))
		}
	}
}

func TestRateLimiterEviction(t *testing.T) {
	l := &RateLimiter{MaxKeys: 100}
	for i := range 50 {
		l.AllowRequest(fmt.Sprint("idle", i), 10, 0, t0)
	}
	// A key that is still waiting must survive the sweep of idle ones.
	for range 10 {
		l.AllowRequest("busy", 10, 0, t0.Add(50*time.Second))
	}
	l.AllowRequest("new", 10, 0, t0.Add(61*time.Second))
	if l.Len() != 2 {
		t.Errorf("%d keys after the sweep, want busy and new", l.Len())
	}
	// 11s earned it 1.8 requests: one goes through, not ten.
	l.AllowRequest("busy", 10, 0, t0.Add(61*time.Second))
	if ok, _ := l.AllowRequest("busy", 10, 0, t0.Add(61*time.Second)); ok {
		t.Error("the busy key's state was lost")
	}
	// Past MaxKeys the least recently used go.
	for i := range 150 {
		l.AllowRequest(fmt.Sprint("k", i), 10, 0, t0.Add(62*time.Second))
	}
	if l.Len() != 100 {
		t.Errorf("%d keys, want the bound of 100", l.Len())
	}
}

func TestRateLimiterConcurrent(t *testing.T) {
	l := &RateLimiter{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				if ok, _ := l.AllowRequest("shared", 300, 0, t0); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
				l.AllowRequest(fmt.Sprint("own", w), 300, 1000, t0)
				l.ChargeTokens(fmt.Sprint("own", w), 1000, i, t0)
			}
		})
	}
	wg.Wait()
	if allowed != 300 {
		t.Errorf("%d requests allowed from a burst of 300", allowed)
	}
}

func BenchmarkRateLimiter(b *testing.B) {
	l := &RateLimiter{}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprint("key_", i)
	}
	now := t0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		now = now.Add(time.Microsecond)
		l.AllowRequest(k, 600, 100_000, now)
		l.ChargeTokens(k, 100_000, 50, now)
		i++
	}
}

func BenchmarkRateLimiterParallel(b *testing.B) {
	l := &RateLimiter{}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := t0
		for pb.Next() {
			now = now.Add(time.Microsecond)
			l.AllowRequest("key", 1_000_000, 0, now)
		}
	})
}
