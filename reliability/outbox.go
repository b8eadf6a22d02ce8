package reliability

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// OutboxMessage is an email waiting in the store to be sent. Writing it in
// the same transaction as the record it announces means the email is
// never lost when the record is kept, nor sent for a record that is not.
type OutboxMessage struct {
	// ID is the message's id, prefix "mail_"; it is also the basis of the
	// Message-ID header, so a resend after a crash can be recognised.
	ID string `json:"id"`
	// To lists the recipients.
	To []string `json:"to"`
	// Subject is the subject line.
	Subject string `json:"subject"`
	// Body is the plain-text body.
	Body string `json:"body"`
	// CreatedAt is when the message was written.
	CreatedAt time.Time `json:"created_at"`
	// Attempts counts the failed tries to send it.
	Attempts int `json:"attempts"`
	// LastError is why the last try failed.
	LastError string `json:"last_error,omitempty"`
	// SentAt is when the message was sent, or nil.
	SentAt *time.Time `json:"sent_at"`
}

// enqueueMail writes a message to the outbox in the caller's transaction.
// It assigns m's ID, and CreatedAt when zero.
func enqueueMail(tx *bolt.Tx, m *OutboxMessage) error {
	if len(m.To) == 0 {
		return errors.New("outbox message has no recipient")
	}
	m.ID = NewID("mail_")
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	m.CreatedAt = m.CreatedAt.UTC()
	m.SentAt = nil
	if err := putJSON(tx.Bucket(bucketOutbox), []byte(m.ID), m); err != nil {
		return err
	}
	if err := tx.Bucket(bucketOutboxPending).Put([]byte(m.ID), []byte(m.ID)); err != nil {
		return fmt.Errorf("queue outbox message: %w", err)
	}
	return nil
}

// OutboxMessage returns the outbox message with this id.
func (s *BoltStore) OutboxMessage(id string) (OutboxMessage, error) {
	var m OutboxMessage
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketOutbox), []byte(id), &m)
	})
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("outbox message %s: %w", id, err)
	}
	return m, nil
}

// PendingMail lists the messages not yet sent, oldest first.
func (s *BoltStore) PendingMail() ([]OutboxMessage, error) {
	var out []OutboxMessage
	err := s.db.View(func(tx *bolt.Tx) error {
		outbox := tx.Bucket(bucketOutbox)
		return tx.Bucket(bucketOutboxPending).ForEach(func(k, _ []byte) error {
			var m OutboxMessage
			if err := getJSON(outbox, k, &m); err != nil {
				return fmt.Errorf("outbox message %s: %w", k, err)
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list pending mail: %w", err)
	}
	return out, nil
}

// markMailSent records that the message was sent at time at, which takes
// it out of the pending list for good.
func (s *BoltStore) markMailSent(id string, at time.Time) error {
	return s.changeMail(id, func(m *OutboxMessage) {
		sent := at.UTC()
		m.SentAt = &sent
	})
}

// markMailFailed records a failed try to send the message.
func (s *BoltStore) markMailFailed(id string, reason string) error {
	return s.changeMail(id, func(m *OutboxMessage) {
		m.Attempts++
		m.LastError = clip(reason)
	})
}

// changeMail applies change to a stored message, and drops it from the
// pending list once it is sent.
func (s *BoltStore) changeMail(id string, change func(*OutboxMessage)) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		outbox := tx.Bucket(bucketOutbox)
		var m OutboxMessage
		if err := getJSON(outbox, []byte(id), &m); err != nil {
			return err
		}
		change(&m)
		if err := putJSON(outbox, []byte(id), m); err != nil {
			return err
		}
		if m.SentAt != nil {
			return tx.Bucket(bucketOutboxPending).Delete([]byte(id))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update outbox message %s: %w", id, err)
	}
	return nil
}
