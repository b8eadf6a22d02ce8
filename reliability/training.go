package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ObjectTrainingRequest is the object tag of a TrainingRequest (SPEC 2.11).
const ObjectTrainingRequest = "training_request"

// Training request states (SPEC section 3). A request starts requested;
// the operator moves it through the others with SetTrainingStatus.
const (
	// TrainingRequested is a new request, not yet looked at.
	TrainingRequested = "requested"
	// TrainingReviewing is a request the sales team is looking at.
	TrainingReviewing = "reviewing"
	// TrainingApproved is a request accepted for training.
	TrainingApproved = "approved"
	// TrainingDeclined is a request turned down.
	TrainingDeclined = "declined"
	// TrainingCompleted is a request whose training is finished.
	TrainingCompleted = "completed"
)

// trainingStatuses is the SPEC's set of training request states.
var trainingStatuses = []string{TrainingRequested, TrainingReviewing, TrainingApproved, TrainingDeclined, TrainingCompleted}

// TrainingRequest asks the provider's sales team to train on a golden
// dataset (SPEC 2.11).
type TrainingRequest struct {
	// ID is the request's id, prefix "tr_".
	ID string `json:"id"`
	// Object is always "training_request".
	Object string `json:"object"`
	// OrgID is the org that asks.
	OrgID string `json:"org_id"`
	// DatasetID is the golden dataset to train on.
	DatasetID string `json:"dataset_id"`
	// DatasetVersion is the dataset's version when the request was made.
	DatasetVersion int `json:"dataset_version"`
	// RequestedByUserID is who asked: the id of the API key used.
	RequestedByUserID string `json:"requested_by_user_id"`
	// Status is one of the Training state constants.
	Status string `json:"status"`
	// Notes are the requester's notes, or nil.
	Notes *string `json:"notes"`
	// CreatedAt is when the request was made.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the status last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// CreateTrainingRequest stores tr as a new request for a golden dataset of
// tr.OrgID and, in the same transaction, writes the email that tells the
// sales team (salesTo) to the outbox, then wakes the mailers. With no
// recipient no email is written. It assigns ID, Object, DatasetVersion,
// Status and UpdatedAt, and CreatedAt when zero. The dataset must exist
// (ErrNotFound) in the org (ErrForbidden) and be golden (a ValidationError
// with CodeDatasetNotGolden).
func (s *BoltStore) CreateTrainingRequest(tr *TrainingRequest, salesTo []string) error {
	if tr == nil {
		return errors.New("create training request: request is nil")
	}
	created := *tr
	created.ID = NewID("tr_")
	created.Object = ObjectTrainingRequest
	created.Status = TrainingRequested
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	created.UpdatedAt = created.CreatedAt
	err := s.db.Update(func(tx *bolt.Tx) error {
		var ds Dataset
		if err := getJSON(tx.Bucket(bucketDatasets), []byte(created.DatasetID), &ds); err != nil {
			return fmt.Errorf("dataset %s: %w", created.DatasetID, err)
		}
		if ds.OrgID != created.OrgID {
			return fmt.Errorf("dataset %s: %w", created.DatasetID, ErrForbidden)
		}
		if ds.Status != DatasetGolden {
			return &ValidationError{Code: CodeDatasetNotGolden,
				Message: fmt.Sprintf("dataset %s is a draft: only a golden dataset can be submitted for training; promote it first", ds.ID)}
		}
		created.DatasetVersion = ds.Version
		if err := putJSON(tx.Bucket(bucketTraining), []byte(created.ID), created); err != nil {
			return err
		}
		if err := putIndex(tx.Bucket(bucketTrainingByOrg), indexPrefix(created.OrgID), created.CreatedAt, created.ID); err != nil {
			return err
		}
		if len(salesTo) == 0 {
			return nil
		}
		mail, err := trainingEmail(tx, created, ds, salesTo)
		if err != nil {
			return err
		}
		return enqueueMail(tx, &mail)
	})
	if err != nil {
		return fmt.Errorf("create training request in org %s: %w", tr.OrgID, err)
	}
	s.mailReady.notify()
	*tr = created
	return nil
}

// trainingEmail writes the sales team's notice of a training request:
// everything they need to pick it up without asking the customer again.
func trainingEmail(tx *bolt.Tx, tr TrainingRequest, ds Dataset, to []string) (OutboxMessage, error) {
	var org Org
	if err := getJSON(tx.Bucket(bucketOrgs), []byte(tr.OrgID), &org); err != nil {
		return OutboxMessage{}, fmt.Errorf("org %s: %w", tr.OrgID, err)
	}
	var op Operation
	if err := getJSON(tx.Bucket(bucketOperations), []byte(ds.OperationID), &op); err != nil {
		return OutboxMessage{}, fmt.Errorf("operation %s: %w", ds.OperationID, err)
	}
	items := 0
	prefix := indexPrefix(ds.ID)
	c := tx.Bucket(bucketItemsByDataset).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		items++
	}
	notes := "(none)"
	if tr.Notes != nil && *tr.Notes != "" {
		notes = *tr.Notes
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A customer asks for training on a golden dataset.\n\n")
	fmt.Fprintf(&b, "Training request: %s\n", tr.ID)
	fmt.Fprintf(&b, "Organisation:     %s (%s, %s plan)\n", org.Name, org.ID, org.Plan)
	fmt.Fprintf(&b, "Requested by:     %s\n", tr.RequestedByUserID)
	fmt.Fprintf(&b, "Operation:        %s (%s)\n", op.Key, op.ID)
	fmt.Fprintf(&b, "Dataset:          %s (%s), version %d, %d items\n", ds.Name, ds.ID, ds.Version, items)
	fmt.Fprintf(&b, "Created at:       %s\n\n", tr.CreatedAt.Format(time.RFC3339))
	fmt.Fprintf(&b, "Notes:\n%s\n", notes)
	return OutboxMessage{
		To:        slices.Clone(to),
		Subject:   fmt.Sprintf("Training request %s: dataset %q of %s", tr.ID, ds.Name, org.Name),
		Body:      b.String(),
		CreatedAt: tr.CreatedAt,
	}, nil
}

// TrainingRequest returns the training request with this id.
func (s *BoltStore) TrainingRequest(id string) (TrainingRequest, error) {
	var tr TrainingRequest
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketTraining), []byte(id), &tr)
	})
	if err != nil {
		return TrainingRequest{}, fmt.Errorf("training request %s: %w", id, err)
	}
	return tr, nil
}

// ListTrainingRequests lists the org's training requests newest first.
func (s *BoltStore) ListTrainingRequests(orgID string, p PageQuery) (Page[TrainingRequest], error) {
	page, err := listIndexed[TrainingRequest](s, bucketTrainingByOrg, bucketTraining, indexPrefix(orgID), p)
	if err != nil {
		return Page[TrainingRequest]{}, fmt.Errorf("list training requests of org %s: %w", orgID, err)
	}
	return page, nil
}

// SetTrainingStatus moves the training request to status, one of the
// SPEC's states, and returns it. The SPEC shows no transitions, so the
// operator may move a request to any state, e.g. to reopen a declined one.
func (s *BoltStore) SetTrainingStatus(id, status string) (TrainingRequest, error) {
	if !slices.Contains(trainingStatuses, status) {
		return TrainingRequest{}, fmt.Errorf("set status of training request %s: %w", id,
			invalid("status", "must be one of %s", strings.Join(trainingStatuses, ", ")))
	}
	var tr TrainingRequest
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTraining)
		if err := getJSON(b, []byte(id), &tr); err != nil {
			return err
		}
		tr.Status = status
		tr.UpdatedAt = time.Now().UTC()
		return putJSON(b, []byte(id), tr)
	})
	if err != nil {
		return TrainingRequest{}, fmt.Errorf("set status of training request %s: %w", id, err)
	}
	return tr, nil
}
