package reliability

import (
	"testing"
	"time"
)

func TestSignalWakesEveryWaiter(t *testing.T) {
	var s signal
	a, b := s.wait(), s.wait()
	if a != b {
		t.Fatal("two waits before a notify got different channels")
	}
	s.notify()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatal("a waiter was not woken")
		}
	}
	next := s.wait()
	select {
	case <-next:
		t.Fatal("a wait after the notify is already woken")
	default:
	}
	var idle signal
	idle.notify() // nobody waits: nothing to do, nothing to panic about
}

func TestClaims(t *testing.T) {
	var c claims
	if !c.claim("a") || c.claim("a") || !c.claim("b") {
		t.Fatal("claim does not exclude")
	}
	c.release("a")
	if !c.claim("a") {
		t.Fatal("a released claim cannot be taken again")
	}
}
