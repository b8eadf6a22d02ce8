package reliability

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
)

// ObjectFeedback is the object tag of Feedback. SPEC 2.8 shows none; every
// other resource has one, so feedback gets one too.
const ObjectFeedback = "feedback"

// Ratings a feedback may carry (SPEC section 4).
const (
	// RatingThumbsUp marks a good answer.
	RatingThumbsUp = "thumbs_up"
	// RatingThumbsDown marks a bad answer and credits the call back.
	RatingThumbsDown = "thumbs_down"
)

// Feedback is a judgement on one recorded call (SPEC 2.8), with the
// outcome of the refund a thumbs_down asks for.
type Feedback struct {
	// ID is the feedback's id, prefix "fb_".
	ID string `json:"id"`
	// Object is always "feedback".
	Object string `json:"object"`
	// OrgID is the org the call and the feedback belong to.
	OrgID string `json:"org_id"`
	// CallID is the call the feedback is about.
	CallID string `json:"call_id"`
	// UserID is who gave the feedback (the API key's id), or nil.
	UserID *string `json:"user_id"`
	// Rating is RatingThumbsUp, RatingThumbsDown or nil.
	Rating *string `json:"rating"`
	// Correction is the answer the call should have given, or nil.
	Correction *string `json:"correction"`
	// Tags label the feedback; never nil once stored.
	Tags []string `json:"tags"`
	// CreatedAt is when the feedback was given.
	CreatedAt time.Time `json:"created_at"`
	// Refund is what a thumbs_down did to the call's charge; nil for other
	// feedback.
	Refund *RefundOutcome `json:"refund"`
}

// RefundOutcome is what a refund request did.
type RefundOutcome struct {
	// Status is one of the Refund constants.
	Status string `json:"status"`
	// AmountUSD is the credit this request made; 0 unless Status is
	// RefundCredited.
	AmountUSD float64 `json:"amount_usd"`
}

// CreateFeedback stores fb for a call of fb.OrgID; a thumbs_down also
// refunds the call within fair use. The feedback and the refund share one
// transaction: either both are on disk when CreateFeedback returns, or
// neither is. It assigns fb's ID, Object, Tags and Refund, and CreatedAt
// when zero; CreatedAt is also the time the fair-use window ends at. The
// call must exist (ErrNotFound) and belong to the org (ErrForbidden).
func (s *BoltStore) CreateFeedback(fb *Feedback, fair FairUse) error {
	if fb == nil {
		return errors.New("create feedback: feedback is nil")
	}
	s.rec.wait()
	created := *fb
	created.ID = NewID("fb_")
	created.Object = ObjectFeedback
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	if created.Tags == nil {
		created.Tags = []string{}
	}
	created.Refund = nil
	err := s.db.Update(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketCalls).Get([]byte(created.CallID))
		if raw == nil {
			return fmt.Errorf("call %s: %w", created.CallID, ErrNotFound)
		}
		if gjson.GetBytes(raw, "org_id").String() != created.OrgID {
			return fmt.Errorf("call %s: %w", created.CallID, ErrForbidden)
		}
		if created.Rating != nil && *created.Rating == RatingThumbsDown {
			out, err := refundInTx(tx, created.OrgID, created.CallID, RefundReasonThumbsDown, created.CreatedAt, &fair)
			if err != nil {
				return err
			}
			created.Refund = &out
		}
		return putJSON(tx.Bucket(bucketFeedback), []byte(created.ID), created)
	})
	if err != nil {
		return fmt.Errorf("create feedback on call %s: %w", fb.CallID, err)
	}
	if created.Refund != nil {
		s.noteRefund(RefundReasonThumbsDown, *created.Refund)
	}
	*fb = created
	return nil
}

// Feedback returns the feedback with this id.
func (s *BoltStore) Feedback(id string) (Feedback, error) {
	var fb Feedback
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketFeedback), []byte(id), &fb)
	})
	if err != nil {
		return Feedback{}, fmt.Errorf("feedback %s: %w", id, err)
	}
	return fb, nil
}
