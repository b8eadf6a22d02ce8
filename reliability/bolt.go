package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the store, one per kind of record and one per index. Index
// keys are described in cursor.go; every record and its index entries are
// written in the same transaction.
var (
	// bucketMeta holds facts about the file itself, such as its schema.
	bucketMeta = []byte("meta")
	// bucketOrgs maps org id to Org.
	bucketOrgs = []byte("orgs")
	// bucketOrgNames maps org name to org id.
	bucketOrgNames = []byte("org_names")
	// bucketKeys maps the SHA-256 of an API key to APIKey.
	bucketKeys = []byte("keys")
	// bucketCalls maps call id to Call.
	bucketCalls = []byte("calls")
	// bucketCallsByOrg lists an org's calls: org | time | call id.
	bucketCallsByOrg = []byte("calls_by_org")
	// bucketCallsByOrgOp lists an org's calls of one operation id:
	// org | operation id | time | call id.
	bucketCallsByOrgOp = []byte("calls_by_org_op")
	// bucketOperations maps operation id to Operation.
	bucketOperations = []byte("operations")
	// bucketOperationsByOrg lists an org's operations: org | time | id.
	bucketOperationsByOrg = []byte("operations_by_org")
	// bucketOperationKeys maps org | key to operation id, which keeps keys
	// unique per org and resolves metadata.operation_id.
	bucketOperationKeys = []byte("operation_keys")

	// bucketLedger maps ledger entry id to LedgerEntry.
	bucketLedger = []byte("ledger")
	// bucketLedgerByOrg lists an org's ledger entries: org | time | id.
	bucketLedgerByOrg = []byte("ledger_by_org")
	// bucketBalances maps org id to its balance in nano-USD (8 bytes,
	// big-endian two's complement), kept equal to the sum of its entries.
	bucketBalances = []byte("balances")
	// bucketCallCharges maps call id to the callCharge charged for it.
	bucketCallCharges = []byte("call_charges")
	// bucketCallRefunds maps call id to the id of its refund entry: the
	// marker that keeps a call from being refunded twice.
	bucketCallRefunds = []byte("call_refunds")
	// bucketFeedbackRefundsByOrg lists the refunds feedback asked for, for
	// the fair-use window: org | time | call id; the value holds the
	// refunded amount (see refundIndexValue), or the call id in entries
	// written before amounts were kept.
	bucketFeedbackRefundsByOrg = []byte("feedback_refunds_by_org")
	// bucketEvalRefundsByOrg lists the eval pass's refunds, for the
	// eval-gated cap: org | time | call id. Like bucketFeedbackRefundsByOrg,
	// its values hold the refunded amount (see refundIndexValue).
	bucketEvalRefundsByOrg = []byte("eval_refunds_by_org")
	// bucketGateHealth maps operation | evaluator to the GateHealth of that
	// ship gate: its recent verdicts and the unreliable flag.
	bucketGateHealth = []byte("gate_health")

	// bucketFeedback maps feedback id to Feedback.
	bucketFeedback = []byte("feedback")

	// bucketDatasets maps dataset id to Dataset.
	bucketDatasets = []byte("datasets")
	// bucketDatasetsByOrg lists an org's datasets: org | time | id.
	bucketDatasetsByOrg = []byte("datasets_by_org")
	// bucketDatasetItems maps dataset item id to DatasetItem.
	bucketDatasetItems = []byte("dataset_items")
	// bucketItemsByDataset lists a dataset's items: dataset | time | id.
	bucketItemsByDataset = []byte("dataset_items_by_dataset")
	// bucketItemsByPrompt finds the items copied from calls with a given
	// prompt fingerprint: org | fingerprint | time | item id.
	bucketItemsByPrompt = []byte("dataset_items_by_prompt")

	// bucketEvaluators maps evaluator id to Evaluator.
	bucketEvaluators = []byte("evaluators")
	// bucketEvaluatorsByOrg lists an org's evaluators: org | time | id.
	bucketEvaluatorsByOrg = []byte("evaluators_by_org")

	// bucketEvaluations maps evaluation id to Evaluation.
	bucketEvaluations = []byte("evaluations")
	// bucketEvaluationsByOrg lists an org's evaluations: org | time | id.
	bucketEvaluationsByOrg = []byte("evaluations_by_org")
	// bucketEvaluationsByDataset lists a dataset's evaluations:
	// dataset | time | id.
	bucketEvaluationsByDataset = []byte("evaluations_by_dataset")
	// bucketEvaluationsOpen holds the ids of pending and running
	// evaluations, oldest first, so the worker never scans finished ones.
	bucketEvaluationsOpen = []byte("evaluations_open")
	// bucketEvaluationResults maps evaluation | item | evaluator to
	// EvaluationResult; the key makes each pair's result unique.
	bucketEvaluationResults = []byte("evaluation_results")

	// bucketCallScores maps call id to the CallScores of its eval pass.
	bucketCallScores = []byte("call_scores")

	// bucketTraining maps training request id to TrainingRequest.
	bucketTraining = []byte("training_requests")
	// bucketTrainingByOrg lists an org's training requests: org | time | id.
	bucketTrainingByOrg = []byte("training_requests_by_org")

	// bucketOutbox maps message id to OutboxMessage.
	bucketOutbox = []byte("outbox")
	// bucketOutboxPending holds the ids of messages not yet sent, oldest
	// first.
	bucketOutboxPending = []byte("outbox_pending")
)

// allBuckets is every bucket OpenBolt makes sure exists.
var allBuckets = [][]byte{
	bucketMeta, bucketOrgs, bucketOrgNames, bucketKeys, bucketBatchQueue,
	bucketCalls, bucketCallsByOrg, bucketCallsByOrgOp,
	bucketOperations, bucketOperationsByOrg, bucketOperationKeys,
	bucketLedger, bucketLedgerByOrg, bucketBalances, bucketCallCharges,
	bucketCallRefunds, bucketFeedbackRefundsByOrg, bucketEvalRefundsByOrg,
	bucketGateHealth, bucketFeedback,
	bucketDatasets, bucketDatasetsByOrg, bucketDatasetItems,
	bucketItemsByDataset, bucketItemsByPrompt,
	bucketEvaluators, bucketEvaluatorsByOrg,
	bucketEvaluations, bucketEvaluationsByOrg, bucketEvaluationsByDataset,
	bucketEvaluationsOpen, bucketEvaluationResults, bucketCallScores,
	bucketTraining, bucketTrainingByOrg, bucketOutbox, bucketOutboxPending,
	bucketKeysByID, bucketKeysByOrg, bucketKeySpend, bucketKeyLastUsed,
	bucketOrgSettings,
}

// schemaVersion is the layout of buckets and keys this code writes. A file
// written by a newer layout is refused rather than misread.
const schemaVersion = 1

// schemaKey is where bucketMeta keeps the schema version.
var schemaKey = []byte("schema")

// storePageSize is the page size of a new store file.
const storePageSize = 16 << 10

// appendFillPercent packs the pages of buckets whose keys mostly arrive in
// ascending order; bbolt's default of one half suits random inserts.
const appendFillPercent = 0.9

// DefaultLockTimeout is how long OpenBolt waits for another process (or an
// earlier, still open store) to release the file.
const DefaultLockTimeout = 5 * time.Second

// BoltOptions tunes OpenBolt. The zero value selects every default.
type BoltOptions struct {
	// Timeout is how long to wait for the file lock bbolt takes; another
	// holder makes OpenBolt fail after it. Default DefaultLockTimeout.
	Timeout time.Duration
	// BatchSize is the most calls committed in one transaction. Default
	// DefaultBatchSize.
	BatchSize int
	// BatchDelay is the longest a recorded call waits for others to share
	// its commit; it bounds what a crash can lose. Default
	// DefaultBatchDelay.
	BatchDelay time.Duration
	// QueueSize is how many recorded calls may wait for the writer before
	// RecordCall blocks. Default DefaultQueueSize.
	QueueSize int
	// OnError receives failures that have no caller to return to: calls
	// dropped by RecordCall and failed background commits. It may be
	// called from several goroutines at once. Nil ignores them.
	OnError func(error)
	// OnCommit is told of every commit of the call writer: how many calls
	// it held, how long it took and its error. It runs on the writer's
	// goroutine, so it must return at once. Nil ignores them.
	OnCommit func(calls int, took time.Duration, err error)
	// OnRefund is told of every refund asked for by feedback, the eval
	// pass or RefundCall, once its transaction has committed. It may be
	// called from several goroutines at once. Nil ignores them.
	OnRefund func(RefundEvent)
}

// withDefaults fills in the zero fields.
func (o BoltOptions) withDefaults() BoltOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultLockTimeout
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchDelay <= 0 {
		o.BatchDelay = DefaultBatchDelay
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	return o
}

// BoltStore is the Store kept in one bbolt file. Reads run in View
// transactions and writes in Update transactions that commit before the
// method returns, except for calls: RecordCall queues them, and a single
// writer commits them in groups of up to BatchSize, each waiting at most
// BatchDelay, so that one fsync covers many calls.
//
// Crash window: a recorded call is durable once its group commits,
// normally within BatchDelay (plus the commit itself) of RecordCall. A crash
// loses the calls queued but not yet committed: at most one BatchDelay's
// worth while the disk keeps up, never more than QueueSize. Close, and so a
// graceful stop or reload, loses nothing.
type BoltStore struct {
	db  *bolt.DB
	rec *recorder
	// credit holds the reservations of calls in flight and the charges
	// queued to rec.
	credit creditBook
	// keys holds the key version, last uses and per-key budget book.
	keys keyState
	// retention bounds the payloads of calls written from now on.
	retention atomic.Pointer[Retention]
	// onRefund is BoltOptions.OnRefund.
	onRefund func(RefundEvent)

	// evalReady and mailReady wake the workers when an evaluation or an
	// email is stored; claims keeps two workers of one process (the old
	// and the new config during a reload) off the same record.
	evalReady signal
	mailReady signal
	claims    claims

	closeOnce sync.Once
	closeErr  error
}

// OpenBolt opens (creating if needed) the store at path: the parent
// directory with mode 0700 and the file with mode 0600, since it holds
// request payloads. bbolt locks the file exclusively, so a second open of
// the same path fails after opt.Timeout until the first is closed.
func OpenBolt(path string, opt BoltOptions) (*BoltStore, error) {
	opt = opt.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: opt.Timeout,
		// The map freelist keeps allocation fast as the file grows with
		// calls; bbolt's array freelist scans linearly.
		FreelistType: bolt.FreelistMapType,
		// Not writing the freelist on every commit makes each commit
		// cheaper (the call writer commits many times a second); bbolt
		// rebuilds it by scanning the file when it opens.
		NoFreelistSync: true,
		// A call record with its payloads is a few KB: a 4 KB page holds
		// one, and bbolt writes every dirty page with a syscall of its
		// own, which costs more than the bytes it copies. 16 KB pages
		// hold several records and cut the writes per commit about
		// threefold. It only applies when the file is created; an
		// existing store keeps the page size it was made with.
		PageSize: storePageSize,
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := initBuckets(tx); err != nil {
			return err
		}
		return indexKeys(tx)
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close())
	}
	s := &BoltStore{db: db, onRefund: opt.OnRefund}
	s.rec = newRecorder(s.commitCalls, opt.OnError, opt.BatchSize, opt.BatchDelay, opt.QueueSize)
	s.rec.onCommit = opt.OnCommit
	s.rec.gaveUp = func(calls []*pendingCall) {
		s.credit.dropped(calls)
		s.keys.spend.dropped(calls)
	}
	return s, nil
}

// initBuckets creates missing buckets and checks the schema version.
func initBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	v := meta.Get(schemaKey)
	if v == nil {
		return meta.Put(schemaKey, []byte(strconv.Itoa(schemaVersion)))
	}
	got, err := strconv.Atoi(string(v))
	if err != nil {
		return fmt.Errorf("read schema version %q: %w", v, err)
	}
	if got > schemaVersion {
		return fmt.Errorf("schema version %d is newer than %d, the newest this gateway reads", got, schemaVersion)
	}
	return nil
}

// Close commits every queued call, then closes the file. RecordCall after
// Close drops the call and reports ErrClosed to OnError; other methods
// return an error. Closing again returns the first result.
func (s *BoltStore) Close() error {
	s.closeOnce.Do(func() {
		path := s.db.Path()
		var errs []error
		if err := s.rec.close(); err != nil {
			errs = append(errs, fmt.Errorf("flush calls: %w", err))
		}
		if err := s.flushKeyUse(); err != nil {
			errs = append(errs, err)
		}
		if err := s.db.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("close store %s: %w", path, err)
		}
	})
	return s.closeErr
}

// putJSON stores v encoded as JSON under key.
func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode record %q: %w", key, err)
	}
	if err := b.Put(key, data); err != nil {
		return fmt.Errorf("put record %q: %w", key, err)
	}
	return nil
}

// getJSON decodes the record under key, or returns ErrNotFound.
func getJSON(b *bolt.Bucket, key []byte, v any) error {
	data := b.Get(key)
	if data == nil {
		return ErrNotFound
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode record %q: %w", key, err)
	}
	return nil
}

// Interface guard.
var _ Store = (*BoltStore)(nil)
