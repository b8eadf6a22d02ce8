package reliability

import "sync"

// signal wakes every goroutine waiting for new work. A waiter takes the
// channel before it looks for work and sleeps on it only if it found none,
// so a notify between the look and the sleep is never lost. The zero value
// is ready to use.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel that is closed by the next notify.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// notify wakes everyone waiting on a channel from wait.
func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// claims records which records a worker of this process is working on.
// During a config reload Caddy starts the new workers before it stops the
// old ones, and both share the one open store: a claim keeps them from
// running the same evaluation or sending the same email twice. A new
// process starts with no claims, which is what lets it resume the work a
// previous process left unfinished. The zero value is ready to use.
type claims struct {
	mu   sync.Mutex
	held map[string]bool
}

// claim takes the record with this key and reports whether it was free.
func (c *claims) claim(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[key] {
		return false
	}
	if c.held == nil {
		c.held = make(map[string]bool)
	}
	c.held[key] = true
	return true
}

// release gives the record back.
func (c *claims) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, key)
}
