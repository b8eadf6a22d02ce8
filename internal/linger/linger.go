// Package linger delivers the answer to a request whose body was refused
// unread.
//
// A server that answers before reading a request body (413 for a declared
// size over the limit) and then closes the connection resets it while the
// client is still sending: the client's next write fails with "connection
// reset by peer" and it never reads the answer. Servers such as nginx
// "linger": after the answer they read and discard what the client still
// sends, for a bounded time and size, then close. The refused body is
// never held in memory; only a small copy buffer is used.
package linger

import (
	"net/http"
	"sync"
	"time"
)

// Bounds of Discard.
const (
	// MaxBytes is the most of a refused body that is discarded.
	MaxBytes = 128 << 20
	// MaxTime is the longest Discard waits for it.
	MaxTime = 10 * time.Second
)

// Discard flushes the answer already written to w, then reads and drops
// up to MaxBytes of r's body for at most MaxTime, so that the client sees
// the answer before the connection closes. Call it last, after the answer
// is written, with the response marked "Connection: close". On HTTP/2 it
// does nothing: the stream is reset on its own without harm.
func Discard(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	var mu sync.Mutex
	done := false
	// A read deadline in the past ends a read in progress; the server's
	// own idle timeouts move deadlines on every read, so a timer, not one
	// deadline, bounds the time.
	t := time.AfterFunc(MaxTime, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			_ = rc.SetReadDeadline(time.Now().Add(-time.Second))
		}
	})
	deadline := time.Now().Add(MaxTime)
	buf := make([]byte, 32<<10)
	var n int64
	for n < MaxBytes && time.Now().Before(deadline) {
		m, err := r.Body.Read(buf)
		n += int64(m)
		if err != nil {
			break
		}
	}
	mu.Lock()
	done = true
	mu.Unlock()
	t.Stop()
}
