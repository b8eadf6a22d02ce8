package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"sync"
	"time"
)

// Defaults of MailerOptions.
const (
	// DefaultMailBackoff is the pause after the first failed send.
	DefaultMailBackoff = time.Second
	// DefaultMailMaxBackoff is the longest pause between tries.
	DefaultMailMaxBackoff = 5 * time.Minute
	// DefaultMailTimeout bounds one delivery to the SMTP server.
	DefaultMailTimeout = 30 * time.Second
	// DefaultMailFrom is the sender when none is configured.
	DefaultMailFrom = "gateway@localhost"
)

// MailerOptions configures a Mailer.
type MailerOptions struct {
	// Addr is the SMTP server, "host:port". Empty keeps messages in the
	// outbox, unsent, until a mailer with a server runs.
	Addr string
	// From is the sender address. Default DefaultMailFrom.
	From string
	// Username and Password, when Username is set, log in with AUTH PLAIN.
	// net/smtp sends them only over TLS (STARTTLS, used whenever the server
	// offers it) or to a server on localhost.
	Username string
	// Password is the password of Username.
	Password string
	// Backoff is the pause after the first failed send; each further
	// failure in a row doubles it. Default DefaultMailBackoff.
	Backoff time.Duration
	// MaxBackoff caps the pause. Default DefaultMailMaxBackoff.
	MaxBackoff time.Duration
	// Timeout bounds one delivery: connecting, the SMTP dialogue and the
	// data. Default DefaultMailTimeout.
	Timeout time.Duration
	// Logger receives failed sends and store errors; nil drops them.
	Logger func(msg string, err error)
}

// withDefaults fills in the zero fields.
func (o MailerOptions) withDefaults() MailerOptions {
	if o.From == "" {
		o.From = DefaultMailFrom
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultMailBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMailMaxBackoff
	}
	if o.MaxBackoff < o.Backoff {
		o.MaxBackoff = o.Backoff
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultMailTimeout
	}
	return o
}

// Mailer drains the store's outbox over SMTP: it sends each pending
// message, oldest first, and marks it sent so it is delivered once. When a
// send fails it pauses with exponential backoff and tries again, for as
// long as it takes. A crash between the server accepting a message and the
// mark being written sends that message again on restart, with the same
// Message-ID.
type Mailer struct {
	store *BoltStore
	opts  MailerOptions

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewMailer returns a mailer of the store's outbox; Start runs it.
func NewMailer(store *BoltStore, opts MailerOptions) *Mailer {
	return &Mailer{store: store, opts: opts.withDefaults()}
}

// Start starts the sending goroutine; Stop ends it. Starting a started or
// stopped mailer does nothing. Without Addr there is nothing to send with,
// and the messages wait in the outbox.
func (m *Mailer) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return
	}
	m.started = true
	if m.opts.Addr == "" {
		m.log("no SMTP server configured: emails wait in the outbox", nil)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go m.run(ctx)
}

// Stop ends the sending goroutine and waits for it; a send under way is
// cut off and tried again by the next mailer. A stopped mailer does not
// start again.
func (m *Mailer) Stop() {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.cancel = nil
	m.started = true
	m.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// run is the sending loop.
func (m *Mailer) run(ctx context.Context) {
	defer close(m.done)
	// Another mailer of this process may have skipped messages this one
	// held: wake it, so nothing waits for the next training request.
	defer m.store.mailReady.notify()
	failures := 0
	for {
		ready := m.store.mailReady.wait()
		sent, err := m.sendPending(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			m.log("sending email failed, will retry", err)
			if !sleep(ctx, backoff(m.opts.Backoff, m.opts.MaxBackoff, failures)) {
				return
			}
			continue
		}
		failures = 0
		if sent > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-ready:
		}
	}
}

// sendPending sends the pending messages in order, stopping at the first
// failure, and reports how many it sent.
func (m *Mailer) sendPending(ctx context.Context) (int, error) {
	pending, err := m.store.PendingMail()
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, msg := range pending {
		if ctx.Err() != nil {
			return sent, ctx.Err()
		}
		key := "mail:" + msg.ID
		if !m.store.claims.claim(key) {
			continue
		}
		err := m.send(ctx, msg)
		if err == nil {
			err = m.store.markMailSent(msg.ID, time.Now())
			if err != nil {
				err = fmt.Errorf("message %s was sent, but marking it failed; it may be sent again: %w", msg.ID, err)
			}
		} else if ctx.Err() == nil {
			if markErr := m.store.markMailFailed(msg.ID, err.Error()); markErr != nil {
				m.log("recording a failed send", markErr)
			}
			err = fmt.Errorf("send message %s: %w", msg.ID, err)
		}
		m.store.claims.release(key)
		if err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

// send delivers one message to the SMTP server.
func (m *Mailer) send(ctx context.Context, msg OutboxMessage) error {
	from, err := mail.ParseAddress(m.opts.From)
	if err != nil {
		return fmt.Errorf("sender %q: %w", m.opts.From, err)
	}
	rcpts := make([]string, 0, len(msg.To))
	for _, to := range msg.To {
		a, err := mail.ParseAddress(to)
		if err != nil {
			return fmt.Errorf("recipient %q: %w", to, err)
		}
		rcpts = append(rcpts, a.Address)
	}
	host, _, err := net.SplitHostPort(m.opts.Addr)
	if err != nil {
		return fmt.Errorf("SMTP address %q: %w", m.opts.Addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", m.opts.Addr)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", m.opts.Addr, err)
	}
	// Closing the connection is what interrupts a stuck SMTP dialogue.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return fmt.Errorf("greeting from %s: %w", m.opts.Addr, err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	}
	if m.opts.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", m.opts.Username, m.opts.Password, host)); err != nil {
			return fmt.Errorf("log in as %s: %w", m.opts.Username, err)
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return fmt.Errorf("RCPT TO %s: %w", r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(formatMail(from, msg)); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("end of message: %w", err)
	}
	if err := c.Quit(); err != nil {
		// The server accepted the message at the end of DATA; a failed
		// QUIT does not undo that, and retrying would send it twice.
		m.log("closing the SMTP session", err)
	}
	return nil
}

// formatMail renders the message in RFC 5322 form with a quoted-printable
// UTF-8 body. Header values are stripped of line breaks, so no text of a
// record can add a header.
func formatMail(from *mail.Address, msg OutboxMessage) []byte {
	oneLine := strings.NewReplacer("\r", " ", "\n", " ")
	domain := "localhost"
	if _, d, ok := strings.Cut(from.Address, "@"); ok && d != "" {
		domain = d
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\n", from.String())
	fmt.Fprintf(&b, "To: %s\r\n", oneLine.Replace(strings.Join(msg.To, ", ")))
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", oneLine.Replace(msg.Subject)))
	fmt.Fprintf(&b, "Date: %s\r\n", msg.CreatedAt.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@%s>\r\n", msg.ID, domain)
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Transfer-Encoding: quoted-printable\r\n\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(msg.Body)) // writes to a bytes.Buffer cannot fail
	_ = qp.Close()
	return b.Bytes()
}

// backoff is the pause after failures failed tries in a row: base doubled
// for each failure after the first, capped at ceiling.
func backoff(base, ceiling time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// sleep waits for d, or less if ctx ends first, and reports whether the
// whole pause passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// log hands a message to the configured logger.
func (m *Mailer) log(msg string, err error) {
	if m.opts.Logger != nil {
		m.opts.Logger(msg, err)
	}
}
