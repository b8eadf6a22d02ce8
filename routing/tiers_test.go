package routing

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// waitFor polls until the provider has n waiters, so a test enqueues its
// calls in a known order.
func waitFor(t *testing.T, s *Scheduler, provider string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Waiting(provider) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters, want %d", s.Waiting(provider), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSchedulerPriority(t *testing.T) {
	s := NewScheduler(map[string]int{"openai": 1})
	hold, err := s.Acquire(context.Background(), "openai", "batch")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	// Enqueued worst first: batch, batch, standard, realtime, standard, realtime.
	calls := []string{"batch-1", "batch-2", "standard-1", "realtime-1", "standard-2", "realtime-2"}
	for i, name := range calls {
		tier := name[:len(name)-2]
		wg.Go(func() {
			release, err := s.Acquire(context.Background(), "openai", tier)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			release()
			release() // a second release gives nothing back twice
		})
		waitFor(t, s, "openai", i+1)
	}
	hold()
	wg.Wait()
	want := []string{"realtime-1", "realtime-2", "standard-1", "standard-2", "batch-1", "batch-2"}
	if !slices.Equal(order, want) {
		t.Errorf("admitted %v, want %v", order, want)
	}
	// Every slot came back: one call goes straight through.
	release, err := s.Acquire(context.Background(), "openai", "batch")
	if err != nil || s.Waiting("openai") != 0 {
		t.Fatal(err)
	}
	release()
}

func TestSchedulerCancel(t *testing.T) {
	s := NewScheduler(map[string]int{"a": 1})
	hold, _ := s.Acquire(context.Background(), "a", "realtime")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Acquire(ctx, "a", "realtime")
		done <- err
	}()
	waitFor(t, s, "a", 1)
	admitted := make(chan struct{})
	go func() {
		release, err := s.Acquire(context.Background(), "a", "batch")
		if err == nil {
			close(admitted)
			release()
		}
	}()
	waitFor(t, s, "a", 2)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	waitFor(t, s, "a", 1)
	// The cancelled realtime call left the queue: the slot goes to batch.
	hold()
	select {
	case <-admitted:
	case <-time.After(5 * time.Second):
		t.Fatal("the batch call was not admitted")
	}
}

// A waiter whose context ends as it is handed the slot passes it on: no
// slot is lost.
func TestSchedulerCancelRace(t *testing.T) {
	s := NewScheduler(map[string]int{"a": 2})
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				if release, err := s.Acquire(ctx, "a", "standard"); err == nil {
					release()
				}
			})
		}
		cancel()
		wg.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r1, err1 := s.Acquire(ctx, "a", "batch")
	r2, err2 := s.Acquire(ctx, "a", "batch")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	r1()
	r2()
}

func TestSchedulerUnlimitedAndErrors(t *testing.T) {
	s := NewScheduler(map[string]int{"zero": 0})
	for _, p := range []string{"zero", "unlisted"} {
		for range 100 {
			if _, err := s.Acquire(context.Background(), p, "batch"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Acquire(context.Background(), "zero", "express"); err == nil {
		t.Error("unknown tier accepted")
	}
}
