package reliability

import (
	"errors"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// queueMail writes a message to the outbox as a training request would.
func queueMail(t *testing.T, s *BoltStore, subject string) OutboxMessage {
	t.Helper()
	m := OutboxMessage{To: []string{"sales@example.com"}, Subject: subject, Body: "body"}
	err := s.db.Update(func(tx *bolt.Tx) error { return enqueueMail(tx, &m) })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOutboxPendingAndSent(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	first := queueMail(t, s, "one")
	second := queueMail(t, s, "two")
	if !strings.HasPrefix(first.ID, "mail_") || first.SentAt != nil || first.CreatedAt.IsZero() {
		t.Fatalf("queued %+v", first)
	}
	pending, err := s.PendingMail()
	if err != nil || len(pending) != 2 || pending[0].ID != first.ID || pending[1].ID != second.ID {
		t.Fatalf("pending = %+v, %v; want oldest first", pending, err)
	}
	if err := s.markMailFailed(first.ID, "connection refused"); err != nil {
		t.Fatal(err)
	}
	if err := s.markMailSent(first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.OutboxMessage(first.ID)
	if err != nil || got.SentAt == nil || got.Attempts != 1 || got.LastError != "connection refused" {
		t.Fatalf("sent message = %+v, %v", got, err)
	}
	if pending, _ := s.PendingMail(); len(pending) != 1 || pending[0].ID != second.ID {
		t.Fatalf("pending after send = %+v", pending)
	}
	if err := s.markMailSent("mail_missing", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("marking a missing message: %v", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error { return enqueueMail(tx, &OutboxMessage{Subject: "nobody"}) })
	if err == nil {
		t.Fatal("a message without recipients was queued")
	}
}
