package reliability

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketBatchQueue holds the batch-tier calls still to run, by call id
// (time-ordered, so the queue drains oldest first).
var bucketBatchQueue = []byte("batch_queue")

// CallQueued is the status of a batch-tier call waiting in the queue.
const CallQueued = "queued"

// BatchJob is a batch-tier call accepted and waiting to run. It holds what
// the gateway needs to run the call later, after a restart too.
type BatchJob struct {
	// CallID is the id the client was given; the result replaces the
	// queued record under it.
	CallID string `json:"call_id"`
	// OrgID is the org the call runs and is billed for.
	OrgID string `json:"org_id"`
	// KeyID is the key that made the call.
	KeyID string `json:"key_id"`
	// Endpoint is the client's endpoint ("chat.completions", "messages",
	// "responses").
	Endpoint string `json:"endpoint"`
	// Body is the client's request body.
	Body json.RawMessage `json:"body"`
	// EnqueuedAt is when the call was accepted.
	EnqueuedAt time.Time `json:"enqueued_at"`
}

// batchClaims keeps two configs sharing a store during a reload from
// running the same job twice.
var batchClaims sync.Map // call id -> struct{}

// EnqueueBatch commits the queued call record and its job in one
// transaction, before the client is told the call was accepted.
func (s *BoltStore) EnqueueBatch(c *Call, job BatchJob) error {
	c.Status = CallQueued
	p, err := prepareCall(c, s.rec.report)
	if err != nil {
		return fmt.Errorf("enqueue batch call: %w", err)
	}
	p.maxPayload = s.maxPayload()
	if err := p.encode(s.rec.report); err != nil {
		return fmt.Errorf("enqueue batch call: %w", err)
	}
	job.CallID, job.OrgID = c.ID, c.OrgID
	data, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("encode batch job %s: %w", c.ID, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := putCallTx(tx, tx.Bucket(bucketCalls), tx.Bucket(bucketCallsByOrg), tx.Bucket(bucketCallsByOrgOp), p); err != nil {
			return err
		}
		return tx.Bucket(bucketBatchQueue).Put([]byte(c.ID), data)
	})
	if err != nil {
		return fmt.Errorf("enqueue batch call %s: %w", c.ID, err)
	}
	return nil
}

// BatchQueueLen is the number of batch calls waiting or running.
func (s *BoltStore) BatchQueueLen() int {
	n := 0
	_ = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketBatchQueue).Stats().KeyN
		return nil
	})
	return n
}

// ClaimBatch returns up to limit of the oldest jobs no one in this process
// is running, and claims them; Done releases each.
func (s *BoltStore) ClaimBatch(limit int) ([]BatchJob, error) {
	var jobs []BatchJob
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBatchQueue).Cursor()
		for k, v := c.First(); k != nil && len(jobs) < limit; k, v = c.Next() {
			if _, taken := batchClaims.LoadOrStore(string(k), struct{}{}); taken {
				continue
			}
			var j BatchJob
			if err := json.Unmarshal(v, &j); err != nil {
				batchClaims.Delete(string(k))
				return fmt.Errorf("decode batch job %s: %w", k, err)
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	return jobs, err
}

// DoneBatch removes a finished job from the queue and releases its claim.
// The call's result was recorded under the same id.
func (s *BoltStore) DoneBatch(callID string) error {
	defer batchClaims.Delete(callID)
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBatchQueue).Delete([]byte(callID))
	})
	if err != nil {
		return fmt.Errorf("finish batch call %s: %w", callID, err)
	}
	return nil
}

// ReleaseBatch gives a claimed job back to the queue, to be run again.
func (s *BoltStore) ReleaseBatch(callID string) { batchClaims.Delete(callID) }
