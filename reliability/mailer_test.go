package reliability

import (
	"errors"
	"io"
	"log"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpSink is a real SMTP server (go-smtp) on a loopback port. It refuses
// the first refuse transactions with a temporary 451, then keeps every
// message it accepts. With user set, it requires AUTH PLAIN as user/pass.
type smtpSink struct {
	addr   string
	refuse int
	user   string
	pass   string

	mu       sync.Mutex
	tries    int
	messages []sinkMessage
}

// sinkMessage is one accepted message.
type sinkMessage struct {
	from string
	to   []string
	data string
}

func startSMTPSink(t *testing.T, refuse int, user, pass string) *smtpSink {
	t.Helper()
	sink := &smtpSink{refuse: refuse, user: user, pass: pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &sinkSession{sink: sink}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink.addr = l.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return sink
}

// received returns the accepted messages and the number of transactions
// tried.
func (s *smtpSink) received() ([]sinkMessage, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkMessage(nil), s.messages...), s.tries
}

// sinkSession is one SMTP session of the sink.
type sinkSession struct {
	sink   *smtpSink
	authed bool
	msg    sinkMessage
}

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *sinkSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.sink.user || pass != s.sink.pass {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.sink.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.sink.mu.Lock()
	defer s.sink.mu.Unlock()
	s.sink.tries++
	if s.sink.tries <= s.sink.refuse {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.msg = sinkMessage{from: from}
	return nil
}

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.to = append(s.msg.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.data = string(data)
	s.sink.mu.Lock()
	s.sink.messages = append(s.sink.messages, s.msg)
	s.sink.mu.Unlock()
	return nil
}

func (s *sinkSession) Reset()        { s.msg = sinkMessage{} }
func (s *sinkSession) Logout() error { return nil }

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goldenTrainingRequest makes a golden dataset and a training request for
// it, emailed to sales@example.com.
func goldenTrainingRequest(t *testing.T, f *fixture) TrainingRequest {
	t.Helper()
	ds := f.dataset(t, item(`"q"`, `"a"`, 1))
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	notes := "Grüße: = signs and long lines " + strings.Repeat("x", 100)
	tr := TrainingRequest{OrgID: f.org.ID, DatasetID: ds.ID, RequestedByUserID: "key_1", Notes: &notes}
	if err := f.s.CreateTrainingRequest(&tr, []string{"sales@example.com"}); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestMailerRetriesThenDeliversOnce(t *testing.T) {
	f := newFixture(t)
	sink := startSMTPSink(t, 2, "", "")
	tr := goldenTrainingRequest(t, f)
	var logged []string
	var logMu sync.Mutex
	m := NewMailer(f.s, MailerOptions{
		Addr: sink.addr, From: "Gateway <gateway@modelgate.test>",
		Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		Logger: func(msg string, err error) {
			logMu.Lock()
			logged = append(logged, msg)
			logMu.Unlock()
		},
	})
	m.Start()
	defer m.Stop()
	waitFor(t, "the email", func() bool { msgs, _ := sink.received(); return len(msgs) == 1 })

	// A second request while the mailer runs is sent without a restart.
	second := goldenTrainingRequest(t, f)
	waitFor(t, "the second email", func() bool { msgs, _ := sink.received(); return len(msgs) == 2 })
	time.Sleep(100 * time.Millisecond)
	m.Stop()

	msgs, tries := sink.received()
	if len(msgs) != 2 || tries != 4 {
		t.Fatalf("%d messages in %d transactions, want 2 in 4 (2 refused)", len(msgs), tries)
	}
	got := msgs[0]
	if got.from != "gateway@modelgate.test" || len(got.to) != 1 || got.to[0] != "sales@example.com" {
		t.Fatalf("envelope = %q -> %v", got.from, got.to)
	}
	parsed, err := mail.ReadMessage(strings.NewReader(got.data))
	if err != nil {
		t.Fatal(err)
	}
	h := parsed.Header
	if !strings.Contains(h.Get("Subject"), tr.ID) || h.Get("To") != "sales@example.com" ||
		!strings.HasPrefix(h.Get("Message-Id"), "<mail_") || !strings.HasSuffix(h.Get("Message-Id"), "@modelgate.test>") ||
		h.Get("Content-Transfer-Encoding") != "quoted-printable" {
		t.Fatalf("headers = %v", h)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(parsed.Body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), tr.ID) || !strings.Contains(string(body), *tr.Notes) {
		t.Fatalf("body = %s", body)
	}
	if !strings.Contains(msgs[1].data, second.ID) {
		t.Fatal("second email is not about the second request")
	}
	if pending, _ := f.s.PendingMail(); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}
	logMu.Lock()
	nlogs := len(logged)
	logMu.Unlock()
	if nlogs < 2 {
		t.Fatalf("refusals were not logged: %v", logged)
	}

	// A new mailer on the same store finds nothing left to send.
	again := NewMailer(f.s, MailerOptions{Addr: sink.addr, Backoff: 10 * time.Millisecond})
	again.Start()
	time.Sleep(100 * time.Millisecond)
	again.Stop()
	if msgs, _ := sink.received(); len(msgs) != 2 {
		t.Fatalf("a restarted mailer resent: %d messages", len(msgs))
	}
}

func TestMailerRecordsFailuresAndStops(t *testing.T) {
	f := newFixture(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now: every connect is refused
	goldenTrainingRequest(t, f)
	m := NewMailer(f.s, MailerOptions{Addr: addr, Backoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	m.Start()
	waitFor(t, "failed attempts", func() bool {
		pending, _ := f.s.PendingMail()
		return len(pending) == 1 && pending[0].Attempts >= 3
	})
	stopped := make(chan struct{})
	go func() {
		m.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	pending, _ := f.s.PendingMail()
	if pending[0].SentAt != nil || !strings.Contains(pending[0].LastError, "connect") {
		t.Fatalf("pending = %+v", pending[0])
	}
}

func TestMailerLogsIn(t *testing.T) {
	f := newFixture(t)
	sink := startSMTPSink(t, 0, "mailer", "s3cret")
	goldenTrainingRequest(t, f)
	wrong := NewMailer(f.s, MailerOptions{Addr: sink.addr, Username: "mailer", Password: "wrong", Backoff: time.Hour})
	wrong.Start()
	waitFor(t, "the refused login", func() bool {
		pending, _ := f.s.PendingMail()
		return len(pending) == 1 && pending[0].Attempts == 1
	})
	wrong.Stop()
	right := NewMailer(f.s, MailerOptions{Addr: sink.addr, Username: "mailer", Password: "s3cret"})
	right.Start()
	defer right.Stop()
	waitFor(t, "the email", func() bool { msgs, _ := sink.received(); return len(msgs) == 1 })
}

func TestMailerWithoutAddressSendsNothing(t *testing.T) {
	f := newFixture(t)
	var logged []string
	m := NewMailer(f.s, MailerOptions{Logger: func(msg string, _ error) { logged = append(logged, msg) }})
	m.Start()
	m.Stop()
	if len(logged) != 1 {
		t.Fatalf("logged %v", logged)
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {10, 60 * time.Second}, {1000, 60 * time.Second}}
	for _, tt := range tests {
		if got := backoff(time.Second, time.Minute, tt.failures); got != tt.want {
			t.Errorf("backoff after %d failures = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

func TestFormatMailKeepsHeadersOneLine(t *testing.T) {
	from, _ := mail.ParseAddress("gateway@modelgate.test")
	raw := formatMail(from, OutboxMessage{ID: "mail_1", To: []string{"a@example.com"}, Subject: "x\r\nBcc: evil@example.com", Body: "hi"})
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get("Bcc") != "" {
		t.Fatal("a subject added a header")
	}
}
