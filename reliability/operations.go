package reliability

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ObjectOperation is the object tag of an Operation (SPEC 2.10).
const ObjectOperation = "operation"

// maxOperationKeyLen is the longest operation key (SPEC section 8).
const maxOperationKeyLen = 128

// Operation is a named production task that calls roll up under and that
// ship gates guard (SPEC 2.10).
type Operation struct {
	// ID is the operation's id, prefix "op_".
	ID string `json:"id"`
	// Object is always "operation".
	Object string `json:"object"`
	// OrgID is the org that owns the operation.
	OrgID string `json:"org_id"`
	// Key is the operation's name in code, unique within the org; calls
	// may name the operation by it in metadata.operation_id.
	Key string `json:"key"`
	// Name is the operation's display name.
	Name string `json:"name"`
	// Description is free text, or nil.
	Description *string `json:"description"`
	// ShipGates bind evaluators to the minimum scores the operation's
	// datasets and cheaper paths must reach; never nil once stored.
	ShipGates []ShipGate `json:"ship_gates"`
	// CreatedAt is when the operation was created.
	CreatedAt time.Time `json:"created_at"`
}

// ShipGate binds an evaluator to a minimum score (SPEC 2.10).
type ShipGate struct {
	// EvaluatorID is the evaluator that scores.
	EvaluatorID string `json:"evaluator_id"`
	// MinScore is the lowest passing score, 0 to 1.
	MinScore float64 `json:"min_score"`
	// Unreliable is true while the eval pass has the gate flagged
	// unreliable (GateHealth): its failures make no eval-gated refund until
	// an operator clears it. Read from the gate's health record, never
	// stored with the operation nor set by a request.
	Unreliable bool `json:"unreliable,omitempty"`
}

// ValidOperationKey reports whether key has the form SPEC section 8 asks
// of operation keys: 1 to 128 characters of [a-z0-9_].
func ValidOperationKey(key string) bool {
	if key == "" || len(key) > maxOperationKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// CreateOperation stores op as a new operation of op.OrgID. It assigns
// op's ID and Object, and CreatedAt when zero, and only once the operation
// is stored. The
// key is checked here, not only by the API, because it is part of an index
// key.
func (s *BoltStore) CreateOperation(op *Operation) error {
	if op == nil {
		return errors.New("create operation: operation is nil")
	}
	if !ValidOperationKey(op.Key) {
		return fmt.Errorf("create operation: key %q is not 1 to %d characters of [a-z0-9_]", op.Key, maxOperationKeyLen)
	}
	created := *op
	created.ID = NewID("op_")
	created.Object = ObjectOperation
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	if created.ShipGates == nil {
		created.ShipGates = []ShipGate{}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOrgs).Get([]byte(created.OrgID)) == nil {
			return fmt.Errorf("org %s: %w", created.OrgID, ErrNotFound)
		}
		keys := tx.Bucket(bucketOperationKeys)
		keyKey := append(indexPrefix(created.OrgID), created.Key...)
		if keys.Get(keyKey) != nil {
			return fmt.Errorf("key %q is taken: %w", created.Key, ErrConflict)
		}
		if err := putJSON(tx.Bucket(bucketOperations), []byte(created.ID), created); err != nil {
			return err
		}
		if err := keys.Put(keyKey, []byte(created.ID)); err != nil {
			return fmt.Errorf("index operation key: %w", err)
		}
		byOrg := tx.Bucket(bucketOperationsByOrg)
		if err := byOrg.Put(indexKey(indexPrefix(created.OrgID), created.CreatedAt, created.ID), []byte(created.ID)); err != nil {
			return fmt.Errorf("index operation by org: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create operation in org %s: %w", op.OrgID, err)
	}
	*op = created
	return nil
}

// Operation returns the operation with this id.
func (s *BoltStore) Operation(id string) (Operation, error) {
	var op Operation
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := getJSON(tx.Bucket(bucketOperations), []byte(id), &op); err != nil {
			return err
		}
		markUnreliableGates(tx, &op)
		return nil
	})
	if err != nil {
		return Operation{}, fmt.Errorf("operation %s: %w", id, err)
	}
	return op, nil
}

// ResolveOperation finds an operation of the org by id, then by key. An id
// wins over a key of the same text; an operation of another org is
// ErrNotFound, so a key cannot reach into another org's operations.
func (s *BoltStore) ResolveOperation(orgID, keyOrID string) (Operation, error) {
	var op Operation
	err := s.db.View(func(tx *bolt.Tx) error {
		ops := tx.Bucket(bucketOperations)
		err := getJSON(ops, []byte(keyOrID), &op)
		if err == nil && op.OrgID == orgID {
			markUnreliableGates(tx, &op)
			return nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		id := tx.Bucket(bucketOperationKeys).Get(append(indexPrefix(orgID), keyOrID...))
		if id == nil {
			return ErrNotFound
		}
		op = Operation{}
		if err := getJSON(ops, id, &op); err != nil {
			return err
		}
		markUnreliableGates(tx, &op)
		return nil
	})
	if err != nil {
		return Operation{}, fmt.Errorf("operation %q in org %s: %w", keyOrID, orgID, err)
	}
	return op, nil
}

// ListOperations lists the org's operations newest first.
func (s *BoltStore) ListOperations(orgID string, p PageQuery) (Page[Operation], error) {
	page := Page[Operation]{Object: ObjectList}
	err := s.db.View(func(tx *bolt.Tx) error {
		ids, err := pageIndex(tx.Bucket(bucketOperationsByOrg), indexPrefix(orgID), p)
		if err != nil {
			return err
		}
		page.Data, err = loadPage[Operation](tx.Bucket(bucketOperations), &ids)
		page.HasMore, page.NextCursor = ids.hasMore, ids.next
		for i := range page.Data {
			markUnreliableGates(tx, &page.Data[i])
		}
		return err
	})
	if err != nil {
		return Page[Operation]{}, fmt.Errorf("list operations of org %s: %w", orgID, err)
	}
	return page, nil
}

// UpdateOperation stores op's Name, Description and ShipGates on the
// operation with op's ID. The other fields are not the caller's to change
// (SPEC's update request has no key): they stay as stored, and op is set to
// the stored result.
func (s *BoltStore) UpdateOperation(op *Operation) error {
	if op == nil {
		return errors.New("update operation: operation is nil")
	}
	var updated Operation
	err := s.db.Update(func(tx *bolt.Tx) error {
		ops := tx.Bucket(bucketOperations)
		if err := getJSON(ops, []byte(op.ID), &updated); err != nil {
			return err
		}
		updated.Name = op.Name
		updated.Description = op.Description
		updated.ShipGates = op.ShipGates
		if updated.ShipGates == nil {
			updated.ShipGates = []ShipGate{}
		}
		if err := putJSON(ops, []byte(updated.ID), updated); err != nil {
			return err
		}
		markUnreliableGates(tx, &updated)
		return nil
	})
	if err != nil {
		return fmt.Errorf("update operation %s: %w", op.ID, err)
	}
	*op = updated
	return nil
}

// OperationUpdate is a partial change to an operation: nil fields are left
// as they are.
type OperationUpdate struct {
	// Name, when set, replaces the name.
	Name *string
	// Description, when SetDescription is true, replaces the description;
	// nil clears it.
	Description *string
	// SetDescription tells a cleared description from an unchanged one.
	SetDescription bool
	// ShipGates, when set, replaces the ship gates.
	ShipGates *[]ShipGate
}

// PatchOperation applies u to the operation with this id in one
// transaction, so two concurrent updates of different fields both stay.
func (s *BoltStore) PatchOperation(id string, u OperationUpdate) (Operation, error) {
	var op Operation
	err := s.db.Update(func(tx *bolt.Tx) error {
		ops := tx.Bucket(bucketOperations)
		if err := getJSON(ops, []byte(id), &op); err != nil {
			return err
		}
		if u.Name != nil {
			op.Name = *u.Name
		}
		if u.SetDescription {
			op.Description = u.Description
		}
		if u.ShipGates != nil {
			op.ShipGates = *u.ShipGates
		}
		if op.ShipGates == nil {
			op.ShipGates = []ShipGate{}
		}
		if err := putJSON(ops, []byte(op.ID), op); err != nil {
			return err
		}
		markUnreliableGates(tx, &op)
		return nil
	})
	if err != nil {
		return Operation{}, fmt.Errorf("update operation %s: %w", id, err)
	}
	return op, nil
}
