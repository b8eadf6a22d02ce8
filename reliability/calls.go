package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ObjectCall is the object tag of a Call (SPEC 2.9).
const ObjectCall = "call"

// Outcomes of a call.
const (
	// CallSucceeded marks a call an upstream answered.
	CallSucceeded = "succeeded"
	// CallFailed marks a call no upstream could answer.
	CallFailed = "failed"
)

// Endpoints a call can arrive on.
const (
	// EndpointChatCompletions is POST /chat/completions.
	EndpointChatCompletions = "chat.completions"
	// EndpointMessages is POST /messages.
	EndpointMessages = "messages"
	// EndpointResponses is POST /responses.
	EndpointResponses = "responses"
	// EndpointEmbeddings is POST /embeddings.
	EndpointEmbeddings = "embeddings"
)

// Bounds on the fields a call is indexed by; real values are far shorter,
// and bbolt rejects keys over 32 KiB, which would fail a whole batch.
const (
	maxCallIDLen      = 256
	maxOperationIDLen = 1024
)

// Call is one recorded model call: the SPEC 2.9 fields, with their JSON
// names, followed by what the gateway keeps for billing and diagnosis.
type Call struct {
	// ID is the id of the completion the client received.
	ID string `json:"id"`
	// Object is always "call".
	Object string `json:"object"`
	// OrgID is the org the call was made for.
	OrgID string `json:"org_id"`
	// KeyID is the API key that made the call (never the key itself).
	KeyID string `json:"key_id,omitempty"`
	// OperationID is the operation the call rolls up under, or nil.
	OperationID *string `json:"operation_id"`
	// Model is the model id the client asked for.
	Model string `json:"model"`
	// ModelVersion is the upstream model that served the call.
	ModelVersion string `json:"model_version"`
	// RequestPayload is the request body as the client sent it.
	RequestPayload json.RawMessage `json:"request_payload"`
	// ResponsePayload is the response body as the client received it; for
	// a stream, the response it adds up to.
	ResponsePayload json.RawMessage `json:"response_payload"`
	// PromptTokens is the upstream's count of input tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the upstream's count of output tokens.
	CompletionTokens int `json:"completion_tokens"`
	// CacheReadTokens are the prompt tokens the provider read from its
	// prompt cache (part of PromptTokens), billed at the cache-read price.
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens are the prompt tokens written to the provider's
	// prompt cache for its default duration (part of PromptTokens).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// CacheWrite1hTokens are the prompt tokens written to a one-hour
	// prompt cache (part of PromptTokens).
	CacheWrite1hTokens int `json:"cache_write_1h_tokens,omitempty"`
	// LatencyMs is the time from request receipt to the last byte.
	LatencyMs int64 `json:"latency_ms"`
	// CreatedAt is when the request was received; lists are ordered by it.
	CreatedAt time.Time `json:"created_at"`

	// Status is CallSucceeded or CallFailed.
	Status string `json:"status"`
	// Error is the reason a failed call failed.
	Error string `json:"error,omitempty"`
	// Endpoint is the endpoint the call arrived on, one of the Endpoint
	// constants.
	Endpoint string `json:"endpoint"`
	// Provider is the upstream that served the call.
	Provider string `json:"provider"`
	// Tier is the tier the call was served at.
	Tier string `json:"tier"`
	// Stream tells whether the response was streamed.
	Stream bool `json:"stream"`
	// CostUSD is what the org is charged; nil when it cannot be known.
	CostUSD *float64 `json:"cost_usd"`
	// UpstreamCostUSD is what the upstream charges the gateway; nil when
	// it cannot be known.
	UpstreamCostUSD *float64 `json:"upstream_cost_usd"`
	// Delivery is the delivery block as sent to the client.
	Delivery json.RawMessage `json:"delivery,omitempty"`
	// Attempts lists every upstream attempt in order, skipped and failed
	// ones included, so a fallback can be explained afterwards.
	Attempts []Attempt `json:"attempts,omitempty"`
	// PathKey names the catalog path that served the call
	// (provider/upstream_model@quantization), which routing learns about.
	PathKey string `json:"path_key,omitempty"`
	// Cache is "hit" when the response cache answered the call (no
	// upstream call was made and nothing was billed).
	Cache string `json:"cache,omitempty"`
	// EvalPass is what the asynchronous eval pass found: the gates'
	// scores and what the eval-gated refund did (credited, capped,
	// gate_unreliable...). Call and ListCalls set it from the pass's
	// scores; nil until the pass has scored the call.
	EvalPass *CallEvalPass `json:"eval_pass,omitempty"`
	// Refund is the call's refund, once one is made (by feedback or the
	// eval pass): what was given back and why. Call and ListCalls set it
	// from the ledger; CostUSD stays what was billed.
	Refund *CallRefund `json:"refund,omitempty"`
	// UsageEstimated is true when the token counts (and so the cost) are
	// the gateway's estimate rather than the upstream's: a stream that
	// ended before its usage arrived (the client left, the upstream broke)
	// is billed for the text it relayed, counted this way.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	// ChargeUSD is what the ledger charges the org for this call, in the
	// same commit as the record; it is not stored on the record itself
	// (CostUSD is). Recording a call again with ChargeUSD 0 charges nothing.
	ChargeUSD float64 `json:"-"`
	// PayloadsChecked tells that the caller has made sure RequestPayload,
	// ResponsePayload and Delivery are valid JSON (the gateway validates
	// every request and checks or writes every response it records); the
	// writer then does not scan them again. Leave it false for payloads of
	// any other origin: invalid ones are then stored as JSON strings.
	PayloadsChecked bool `json:"-"`
}

// Attempt is one try of one upstream path for a call.
type Attempt struct {
	// Provider is the upstream tried.
	Provider string `json:"provider"`
	// UpstreamModel is the model name sent to that upstream.
	UpstreamModel string `json:"upstream_model"`
	// Status is the upstream's HTTP status; 0 when none was received.
	Status int `json:"status,omitempty"`
	// Error says why the attempt failed or was skipped.
	Error string `json:"error,omitempty"`
	// LatencyMs is how long the attempt took.
	LatencyMs int64 `json:"latency_ms"`
}

// pendingCall is a call encoded on the caller's goroutine, so the writer
// only copies bytes and a caller may reuse its Call once RecordCall returns.
type pendingCall struct {
	id          string
	orgID       string
	operationID string
	// keyID is the key that made the call; its charge counts against the
	// key's budget.
	keyID   string
	created time.Time
	// call is encoded into data by the writer, off the caller's goroutine.
	call *Call
	// buf holds data when it came from encodeBufs; it goes back after the
	// commit, when bbolt no longer reads it.
	buf *[]byte
	// charge is what the ledger charges for the call in the same commit,
	// in nano-USD; 0 charges nothing.
	charge int64
	data   []byte
	// maxPayload is the payload size kept whole (see Retention).
	maxPayload int
}

// RecordCall queues c for the writer and returns without waiting for the
// disk; it blocks only while the queue is full. It fills in an empty ID
// (prefix "call_"), Object and CreatedAt of c first, so the caller knows
// them. The writer encodes c later, off the response path, so the caller
// must not change c after handing it over.
// Recording an id again replaces the stored call, which is how a
// deferred (batch tier) result or a refund updates it. A call that cannot
// be stored (no org, oversized ids, a closed store) is reported to OnError
// and dropped.
func (s *BoltStore) RecordCall(c *Call) {
	p, err := prepareCall(c, s.rec.report)
	if err == nil {
		p.maxPayload = s.maxPayload()
		// The charge counts against the org's credit from now until its
		// commit has returned (see creditBook).
		s.credit.queued(p)
		s.keys.spend.queued(p)
		if err = s.rec.enqueue(p); err != nil {
			s.credit.dropped([]*pendingCall{p})
			s.keys.spend.dropped([]*pendingCall{p})
		}
	}
	if err != nil {
		id := ""
		if c != nil {
			id = c.ID
		}
		s.rec.report(fmt.Errorf("record call %q: %w", id, err))
	}
}

// prepareCall fills in c's defaults and encodes it.
func prepareCall(c *Call, report func(error)) (*pendingCall, error) {
	if c == nil {
		return nil, errors.New("call is nil")
	}
	if c.ID == "" {
		c.ID = NewID("call_")
	}
	if c.Object == "" {
		c.Object = ObjectCall
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	p := &pendingCall{id: c.ID, orgID: c.OrgID, keyID: c.KeyID, created: c.CreatedAt}
	if c.OperationID != nil {
		p.operationID = *c.OperationID
	}
	switch {
	case c.OrgID == "":
		return nil, errors.New("org_id is empty")
	case len(c.ID) > maxCallIDLen || len(c.OrgID) > maxCallIDLen:
		return nil, fmt.Errorf("id or org_id longer than %d bytes", maxCallIDLen)
	case len(p.operationID) > maxOperationIDLen:
		return nil, fmt.Errorf("operation_id longer than %d bytes", maxOperationIDLen)
	}
	if c.ChargeUSD > 0 {
		nanos, err := toNanos(c.ChargeUSD)
		if err != nil {
			return nil, fmt.Errorf("charge: %w", err)
		}
		p.charge = nanos
	}
	p.call = c
	return p, nil
}

// encode turns the queued call into the bytes the store keeps. It runs on
// the writer goroutine.
func (p *pendingCall) encode(report func(error)) error {
	if p.data != nil {
		return nil
	}
	c := limitPayloads(p.call, p.maxPayload)
	buf, _ := encodeBufs.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	data, ok := appendCall((*buf)[:0], c)
	p.buf = buf
	var err error
	if !ok {
		// An upstream that answers with an HTML error page leaves a payload
		// that is not JSON. The call still has to be kept (it may be
		// billed), so keep such payloads as JSON strings instead.
		data, err = json.Marshal(quoteInvalidPayloads(*c))
		if err != nil {
			return fmt.Errorf("encode call %s: %w", c.ID, err)
		}
		report(fmt.Errorf("record call %s: payload is not JSON, stored as a string", c.ID))
	}
	p.data, p.call = data, nil
	return nil
}

// quoteInvalidPayloads returns c with each raw JSON field that does not hold
// valid JSON replaced by a JSON string of its bytes.
func quoteInvalidPayloads(c Call) Call {
	for _, raw := range []*json.RawMessage{&c.RequestPayload, &c.ResponsePayload, &c.Delivery} {
		if len(*raw) > 0 && !json.Valid(*raw) {
			quoted, _ := json.Marshal(string(*raw)) // a string always encodes
			*raw = quoted
		}
	}
	return c
}

// commitCalls writes a batch of calls and their index entries in one
// transaction; it is the recorder's commit function.
func (s *BoltStore) commitCalls(batch []*pendingCall) error {
	kept := make([]*pendingCall, 0, len(batch))
	for _, p := range batch {
		if err := p.encode(s.rec.report); err != nil {
			s.rec.report(err)
			s.credit.dropped([]*pendingCall{p})
			s.keys.spend.dropped([]*pendingCall{p})
			continue
		}
		kept = append(kept, p)
	}
	batch = kept
	// The batch's charges move into the transaction's id just before it
	// commits, and back to queued when it does not (see creditBook).
	txid := 0
	var err error
	// Keys used since their last use was written go in the same commit.
	uses := s.keys.use.take()
	var usesDone func()
	defer func() {
		if err != nil || usesDone == nil {
			s.keys.use.putBack(uses)
		} else {
			usesDone()
		}
		if err != nil {
			return // a retry commits the same bytes again
		}
		for _, p := range batch {
			if p.buf != nil && cap(p.data) <= maxPooledEncode {
				*p.buf = p.data[:0]
				encodeBufs.Put(p.buf)
			}
			p.buf = nil
		}
	}()
	err = s.db.Update(func(tx *bolt.Tx) error {
		w := callWriter{
			calls:  tx.Bucket(bucketCalls),
			byOrg:  tx.Bucket(bucketCallsByOrg),
			byOp:   tx.Bucket(bucketCallsByOrgOp),
			ledger: newLedgerTx(tx),
			spend:  newKeySpendTx(tx),
		}
		// Calls and ledger entries arrive in roughly ascending key order,
		// so pages can be packed instead of split half empty.
		for _, b := range [...]*bolt.Bucket{w.calls, w.byOrg, w.byOp, w.ledger.entries, w.ledger.byOrg, w.ledger.charges} {
			b.FillPercent = appendFillPercent
		}
		for _, p := range batch {
			if err := w.put(p); err != nil {
				return err
			}
		}
		if err := w.ledger.flush(); err != nil {
			return err
		}
		if err := w.spend.flush(); err != nil {
			return err
		}
		var err error
		if usesDone, err = writeKeyUse(tx, uses); err != nil {
			return err
		}
		txid = tx.ID()
		s.credit.writing(batch, txid)
		s.keys.spend.writing(batch, txid)
		return nil
	})
	if err != nil && txid != 0 {
		s.credit.unwritten(batch, txid)
		s.keys.spend.unwritten(batch, txid)
	}
	return err
}

// encodeBufs recycles the buffers calls are encoded into: every served
// call needs one, and bbolt is done with it once the commit returns.
var encodeBufs sync.Pool

// maxPooledEncode keeps unusually large buffers out of the pool.
const maxPooledEncode = 256 << 10

// callWriter writes calls inside one transaction.
type callWriter struct {
	calls, byOrg, byOp *bolt.Bucket
	// ledger charges the calls; it writes each org's balance once, when
	// the batch is done.
	ledger *ledgerTx
	// spend counts the charges of each key against its budget periods.
	spend *keySpendTx
	// key is scratch space for index keys, which bbolt copies on Put.
	key []byte
}

// putCallTx writes one encoded call with its indexes (and its charge)
// inside tx, replacing an earlier record of the same id.
func putCallTx(tx *bolt.Tx, calls, byOrg, byOp *bolt.Bucket, p *pendingCall) error {
	w := callWriter{calls: calls, byOrg: byOrg, byOp: byOp, ledger: newLedgerTx(tx), spend: newKeySpendTx(tx)}
	if err := w.put(p); err != nil {
		return err
	}
	if err := w.ledger.flush(); err != nil {
		return err
	}
	return w.spend.flush()
}

// put writes one encoded call with its indexes and its charge, replacing
// an earlier record of the same id.
func (w *callWriter) put(p *pendingCall) error {
	// One copy of the id serves as the record's key and as the value of
	// its index entries: bbolt keeps values until the commit, and never
	// changes them.
	id := []byte(p.id)
	old := w.calls.Get(id)
	if old != nil {
		if err := unindexCall(w.byOrg, w.byOp, p.id, old); err != nil {
			return err
		}
	}
	if err := w.calls.Put(id, p.data); err != nil {
		return fmt.Errorf("put call %s: %w", p.id, err)
	}
	w.key = appendIndexKey(appendIndexField(w.key[:0], p.orgID), p.created, p.id)
	if err := w.byOrg.Put(w.key, id); err != nil {
		return fmt.Errorf("index call %s by org: %w", p.id, err)
	}
	if p.operationID != "" {
		w.key = appendIndexKey(appendIndexField(appendIndexField(w.key[:0], p.orgID), p.operationID), p.created, p.id)
		if err := w.byOp.Put(w.key, id); err != nil {
			return fmt.Errorf("index call %s by operation: %w", p.id, err)
		}
	}
	if p.charge > 0 {
		if err := w.ledger.charge(p.orgID, p.id, p.charge, p.created, old == nil); err != nil {
			return fmt.Errorf("charge call %s: %w", p.id, err)
		}
		w.spend.add(p.keyID, p.created, p.charge)
	}
	return nil
}

// unindexCall removes the index entries of a stored call about to be
// replaced, whose org, operation or time may differ from the new one.
func unindexCall(byOrg, byOp *bolt.Bucket, id string, old []byte) error {
	var prev struct {
		OrgID       string    `json:"org_id"`
		OperationID *string   `json:"operation_id"`
		CreatedAt   time.Time `json:"created_at"`
	}
	if err := json.Unmarshal(old, &prev); err != nil {
		return fmt.Errorf("decode stored call %s: %w", id, err)
	}
	if err := byOrg.Delete(indexKey(indexPrefix(prev.OrgID), prev.CreatedAt, id)); err != nil {
		return fmt.Errorf("unindex call %s by org: %w", id, err)
	}
	if prev.OperationID != nil && *prev.OperationID != "" {
		if err := byOp.Delete(indexKey(indexPrefix(prev.OrgID, *prev.OperationID), prev.CreatedAt, id)); err != nil {
			return fmt.Errorf("unindex call %s by operation: %w", id, err)
		}
	}
	return nil
}

// Sync returns once every call queued before it is committed.
func (s *BoltStore) Sync() error {
	if err := s.rec.flush(); err != nil {
		return fmt.Errorf("sync calls to %s: %w", s.db.Path(), err)
	}
	return nil
}

// Call returns the call with this id. It first waits for calls still in
// the queue, so a client can read back the call it was just answered for.
func (s *BoltStore) Call(id string) (Call, error) {
	s.rec.wait()
	var c Call
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := getJSON(tx.Bucket(bucketCalls), []byte(id), &c); err != nil {
			return err
		}
		if err := attachRefund(tx, &c); err != nil {
			return err
		}
		return attachEvalPass(tx, &c)
	})
	if err != nil {
		return Call{}, fmt.Errorf("call %s: %w", id, err)
	}
	return c, nil
}

// ListCalls lists the org's calls newest first, optionally only those whose
// operation_id is exactly q.OperationID. Like Call, it first waits for calls
// still in the queue.
func (s *BoltStore) ListCalls(orgID string, q CallQuery) (Page[Call], error) {
	s.rec.wait()
	page := Page[Call]{Object: ObjectList}
	err := s.db.View(func(tx *bolt.Tx) error {
		index, prefix := tx.Bucket(bucketCallsByOrg), indexPrefix(orgID)
		if q.OperationID != "" {
			index, prefix = tx.Bucket(bucketCallsByOrgOp), indexPrefix(orgID, q.OperationID)
		}
		ids, err := pageIndex(index, prefix, q.PageQuery)
		if err != nil {
			return err
		}
		page.Data, err = loadPage[Call](tx.Bucket(bucketCalls), &ids)
		page.HasMore, page.NextCursor = ids.hasMore, ids.next
		if err != nil {
			return err
		}
		for i := range page.Data {
			if err := attachEvalPass(tx, &page.Data[i]); err != nil {
				return err
			}
			if err := attachRefund(tx, &page.Data[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Page[Call]{}, fmt.Errorf("list calls of org %s: %w", orgID, err)
	}
	return page, nil
}
