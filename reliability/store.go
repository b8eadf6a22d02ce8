// Package reliability holds the domain behind the gateway's reliability API
// and the store that keeps it: orgs, keys, the credit ledger and refunds,
// calls, operations and their ship gates, datasets, evaluators, evaluations,
// feedback, training requests and the email outbox. It also runs the
// background work of that domain: the evaluation worker, the asynchronous
// eval pass over served calls, and the mailer that drains the outbox.
//
// API serves the reliability endpoints of SPEC section 4 over HTTP; the
// Caddy glue authenticates the request, then hands it to API.ServeHTTP.
// Model calls the domain needs (judging, embedding, running an evaluation
// against a model) go through the ModelCaller the glue provides, so that
// they take the gateway's own call path.
package reliability

import (
	"errors"
	"fmt"
	"time"
)

// Store is the persistence the gateway needs, expressed as domain
// operations rather than as a key-value API, so that a shared database can
// replace the embedded bbolt file when one node is no longer enough.
// Implementations are safe for concurrent use.
type Store interface {
	// EnsureOrg returns the org with this name, creating it on the free
	// plan when there is none yet.
	EnsureOrg(name string) (Org, error)
	// Org returns the org with this id, or ErrNotFound.
	Org(id string) (Org, error)

	// CreateKey issues a new API key for the org. The key text is returned
	// once; only its hash is stored.
	CreateKey(orgID, prefix string) (key string, rec APIKey, err error)
	// AddKey registers a key chosen elsewhere (a configured key) for the
	// org. Adding the same key to the same org again returns the existing
	// record; adding it to another org is ErrConflict.
	AddKey(orgID, key string) (APIKey, error)
	// KeyByHash returns the key with this hash, or ErrNotFound.
	KeyByHash(h [32]byte) (APIKey, error)
	// CreateKeyWith issues a key with a name, expiry, budget, model list
	// or the admin role.
	CreateKeyWith(orgID, prefix string, opt KeyOptions) (key string, rec APIKey, err error)
	// KeyByID returns the key with this id, or ErrNotFound.
	KeyByID(id string) (APIKey, error)
	// ListKeys lists the org's stored keys newest first, never their
	// secrets.
	ListKeys(orgID string, q PageQuery, now time.Time) (Page[KeyInfo], error)
	// RevokeKey revokes a key; it no longer authenticates from the next
	// request on.
	RevokeKey(id string, at time.Time) (APIKey, error)
	// RotateKey gives a key a new secret, returned once; the old one no
	// longer authenticates.
	RotateKey(id, prefix string, at time.Time) (key string, rec APIKey, err error)
	// TouchKey notes a use of a key, written in batches (KeyUseInterval).
	TouchKey(id string, at time.Time)
	// ReserveKeyBudget holds a call's worst-case cost against its key's
	// budget, or fails with *BudgetError.
	ReserveKeyBudget(keyID string, b KeyBudget, needUSD float64, at time.Time) (*KeyReservation, error)

	// RecordCall queues the call for storage and returns without waiting
	// for the disk. It fills in an empty ID, Object and CreatedAt of c.
	RecordCall(c *Call)
	// Sync returns once every call queued before it is committed. Its error
	// is the first commit failure since the previous Sync.
	Sync() error
	// Call returns the call with this id, or ErrNotFound. A call queued
	// before Call is asked for is always found.
	Call(id string) (Call, error)
	// ListCalls lists the org's calls newest first.
	ListCalls(orgID string, q CallQuery) (Page[Call], error)

	// CreateOperation stores a new operation, assigning its ID, Object and
	// CreatedAt. A key already used in the org is ErrConflict.
	CreateOperation(op *Operation) error
	// Operation returns the operation with this id, or ErrNotFound.
	Operation(id string) (Operation, error)
	// ResolveOperation finds an operation of the org by id or by key, the
	// two forms metadata.operation_id may take.
	ResolveOperation(orgID, keyOrID string) (Operation, error)
	// ListOperations lists the org's operations newest first.
	ListOperations(orgID string, p PageQuery) (Page[Operation], error)
	// UpdateOperation stores the mutable fields of an existing operation.
	UpdateOperation(op *Operation) error

	// Close commits every queued call, then releases the store.
	Close() error
}

// Errors a Store returns, wrapped with context; test with errors.Is.
var (
	// ErrNotFound means the record asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the write would break a uniqueness rule.
	ErrConflict = errors.New("conflict")
	// ErrBadCursor means a page cursor is not one the store handed out.
	ErrBadCursor = errors.New("invalid cursor")
	// ErrBadLimit means a page limit is outside 1..MaxPageLimit.
	ErrBadLimit = errors.New("invalid limit")
	// ErrClosed means the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrForbidden means the record exists but belongs to another org.
	ErrForbidden = errors.New("belongs to another org")
)

// Page sizes of every list (SPEC section 8).
const (
	// DefaultPageLimit is the page size when none is asked for.
	DefaultPageLimit = 50
	// MaxPageLimit is the largest page a client may ask for.
	MaxPageLimit = 200
)

// PageQuery selects one page of a list.
type PageQuery struct {
	// Limit is the page size, 1 to MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// MaxBytes bounds the stored size of the page's records: the page
	// ends early, with HasMore and a cursor, once the next record would
	// take it past the bound; the first record is always included. 0 means
	// DefaultMaxPageBytes.
	MaxBytes int
}

// limit applies the default and checks the range, so every list enforces
// the same rule whatever the handler in front of it checked.
func (p PageQuery) limit() (int, error) {
	switch {
	case p.Limit == 0:
		return DefaultPageLimit, nil
	case p.Limit < 1 || p.Limit > MaxPageLimit:
		return 0, fmt.Errorf("%w: %d is outside 1..%d", ErrBadLimit, p.Limit, MaxPageLimit)
	}
	return p.Limit, nil
}

// CallQuery selects one page of an org's calls.
type CallQuery struct {
	// PageQuery is the page asked for.
	PageQuery
	// OperationID, when set, keeps only calls whose stored operation_id is
	// exactly this value.
	OperationID string
}

// Page is one page of a list, shaped as the SPEC's list responses.
type Page[T any] struct {
	// Object is always "list".
	Object string `json:"object"`
	// Data holds the page's items, newest first; never nil.
	Data []T `json:"data"`
	// HasMore tells whether items remain after this page.
	HasMore bool `json:"has_more"`
	// NextCursor fetches the next page; nil on the last page.
	NextCursor *string `json:"next_cursor"`
}

// ObjectList is the object tag of every list response.
const ObjectList = "list"
