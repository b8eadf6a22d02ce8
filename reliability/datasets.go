package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
)

// Object tags of datasets and their items (SPEC 2.11).
const (
	// ObjectDataset is the object tag of a Dataset.
	ObjectDataset = "dataset"
	// ObjectDatasetItem is the object tag of a DatasetItem.
	ObjectDatasetItem = "dataset_item"
)

// Dataset states (SPEC section 3).
const (
	// DatasetDraft is a dataset that still takes items.
	DatasetDraft = "draft"
	// DatasetGolden is a promoted dataset: frozen, and the reference the
	// eval pass and training requests use.
	DatasetGolden = "golden"
)

// DefaultItemWeight is the weight of an item added without one.
const DefaultItemWeight = 1

// Dataset is a versioned set of input and expected-output items of one
// operation (SPEC 2.11). It is created at version 1 as a draft; every
// accepted add of items makes a new version, and promotion freezes it.
type Dataset struct {
	// ID is the dataset's id, prefix "ds_".
	ID string `json:"id"`
	// Object is always "dataset".
	Object string `json:"object"`
	// OrgID is the org that owns the dataset.
	OrgID string `json:"org_id"`
	// OperationID is the operation whose ship gates judge the dataset.
	OperationID string `json:"operation_id"`
	// Name is the dataset's display name.
	Name string `json:"name"`
	// Version counts the accepted adds of items, from 1 at creation.
	Version int `json:"version"`
	// Status is DatasetDraft or DatasetGolden.
	Status string `json:"status"`
	// PromotedAt is when the dataset became golden, or nil.
	PromotedAt *time.Time `json:"promoted_at"`
	// CreatedAt is when the dataset was created.
	CreatedAt time.Time `json:"created_at"`
}

// DatasetItem is one input with the output expected for it (SPEC 2.11).
type DatasetItem struct {
	// ID is the item's id, prefix "dsi_".
	ID string `json:"id"`
	// Object is always "dataset_item".
	Object string `json:"object"`
	// DatasetID is the dataset the item belongs to.
	DatasetID string `json:"dataset_id"`
	// SourceCallID is the recorded call the item was taken from, or nil.
	SourceCallID *string `json:"source_call_id"`
	// Input is what is sent to a model: a string, or a chat-style messages
	// array; absent when not given.
	Input json.RawMessage `json:"input,omitempty"`
	// ExpectedOutput is the answer the item expects; absent when not given.
	ExpectedOutput json.RawMessage `json:"expected_output,omitempty"`
	// Weight is the item's share in an evaluation's weighted mean, 0 to 100.
	Weight float64 `json:"weight"`
	// CreatedAt is when the item was added.
	CreatedAt time.Time `json:"created_at"`
	// DatasetVersion is the dataset version the item's add created; an
	// evaluation of version v scores the items of versions up to v.
	DatasetVersion int `json:"dataset_version"`
	// PromptFingerprint is the prompt fingerprint of the source call, which
	// lets the eval pass find this item's expected output for a call with
	// the same prompt; empty for items not taken from a call.
	PromptFingerprint string `json:"prompt_fingerprint,omitempty"`
}

// CreateDataset stores ds as a new draft dataset at version 1 of an
// operation of ds.OrgID. It assigns ID, Object, Version, Status and
// PromotedAt, and CreatedAt when zero. An operation that does not exist is
// ErrNotFound, one of another org ErrForbidden.
func (s *BoltStore) CreateDataset(ds *Dataset) error {
	if ds == nil {
		return errors.New("create dataset: dataset is nil")
	}
	created := *ds
	created.ID = NewID("ds_")
	created.Object = ObjectDataset
	created.Version = 1
	created.Status = DatasetDraft
	created.PromotedAt = nil
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now()
	}
	created.CreatedAt = created.CreatedAt.UTC()
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := checkOperationOf(tx, created.OrgID, created.OperationID); err != nil {
			return err
		}
		if err := putJSON(tx.Bucket(bucketDatasets), []byte(created.ID), created); err != nil {
			return err
		}
		return putIndex(tx.Bucket(bucketDatasetsByOrg), indexPrefix(created.OrgID), created.CreatedAt, created.ID)
	})
	if err != nil {
		return fmt.Errorf("create dataset in org %s: %w", ds.OrgID, err)
	}
	*ds = created
	return nil
}

// checkOperationOf makes sure the operation exists and belongs to orgID.
func checkOperationOf(tx *bolt.Tx, orgID, operationID string) error {
	var op Operation
	if err := getJSON(tx.Bucket(bucketOperations), []byte(operationID), &op); err != nil {
		return fmt.Errorf("operation %s: %w", operationID, err)
	}
	if op.OrgID != orgID {
		return fmt.Errorf("operation %s: %w", operationID, ErrForbidden)
	}
	return nil
}

// putIndex adds the index entry of a record made at created.
func putIndex(b *bolt.Bucket, prefix []byte, created time.Time, id string) error {
	if err := b.Put(indexKey(prefix, created, id), []byte(id)); err != nil {
		return fmt.Errorf("index %s: %w", id, err)
	}
	return nil
}

// Dataset returns the dataset with this id.
func (s *BoltStore) Dataset(id string) (Dataset, error) {
	var ds Dataset
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketDatasets), []byte(id), &ds)
	})
	if err != nil {
		return Dataset{}, fmt.Errorf("dataset %s: %w", id, err)
	}
	return ds, nil
}

// ListDatasets lists the org's datasets newest first.
func (s *BoltStore) ListDatasets(orgID string, p PageQuery) (Page[Dataset], error) {
	page, err := listIndexed[Dataset](s, bucketDatasetsByOrg, bucketDatasets, indexPrefix(orgID), p)
	if err != nil {
		return Page[Dataset]{}, fmt.Errorf("list datasets of org %s: %w", orgID, err)
	}
	return page, nil
}

// AddDatasetItems adds items to a draft dataset as its next version, and
// returns the dataset at that version with the stored items in the order
// given. It assigns each item's ID, Object, DatasetID and DatasetVersion,
// CreatedAt when zero, and, for an item with a SourceCallID, the prompt
// fingerprint of that call. A golden dataset is frozen: adding to it is a
// ValidationError with CodeDatasetFrozen. A source call must exist
// (ErrNotFound) and belong to the dataset's org (ErrForbidden).
func (s *BoltStore) AddDatasetItems(datasetID string, items []DatasetItem) (Dataset, []DatasetItem, error) {
	if len(items) == 0 || len(items) > maxItemsPerAdd {
		return Dataset{}, nil, fmt.Errorf("add items to dataset %s: %w", datasetID,
			invalid("items", "must have 1 to %d items", maxItemsPerAdd))
	}
	s.rec.wait()
	now := time.Now()
	var ds Dataset
	stored := make([]DatasetItem, len(items))
	err := s.db.Update(func(tx *bolt.Tx) error {
		datasets := tx.Bucket(bucketDatasets)
		if err := getJSON(datasets, []byte(datasetID), &ds); err != nil {
			return err
		}
		if ds.Status == DatasetGolden {
			return &ValidationError{Code: CodeDatasetFrozen,
				Message: fmt.Sprintf("dataset %s is golden, and a golden dataset is frozen: create a new dataset to add items", ds.ID)}
		}
		ds.Version++
		calls := tx.Bucket(bucketCalls)
		records := tx.Bucket(bucketDatasetItems)
		byDataset := tx.Bucket(bucketItemsByDataset)
		byPrompt := tx.Bucket(bucketItemsByPrompt)
		for i, it := range items {
			it.ID = NewID("dsi_")
			it.Object = ObjectDatasetItem
			it.DatasetID = ds.ID
			it.DatasetVersion = ds.Version
			it.PromptFingerprint = ""
			if it.CreatedAt.IsZero() {
				it.CreatedAt = now
			}
			it.CreatedAt = it.CreatedAt.UTC()
			if it.SourceCallID != nil {
				raw := calls.Get([]byte(*it.SourceCallID))
				switch {
				case raw == nil:
					return fmt.Errorf("items[%d]: call %s: %w", i, *it.SourceCallID, ErrNotFound)
				case gjson.GetBytes(raw, "org_id").String() != ds.OrgID:
					return fmt.Errorf("items[%d]: call %s: %w", i, *it.SourceCallID, ErrForbidden)
				}
				it.PromptFingerprint = gjson.GetBytes(raw, "delivery.fingerprints.prompt").String()
			}
			if err := putJSON(records, []byte(it.ID), it); err != nil {
				return err
			}
			if err := putIndex(byDataset, indexPrefix(ds.ID), it.CreatedAt, it.ID); err != nil {
				return err
			}
			if it.PromptFingerprint != "" {
				if err := putIndex(byPrompt, indexPrefix(ds.OrgID, it.PromptFingerprint), it.CreatedAt, it.ID); err != nil {
					return err
				}
			}
			stored[i] = it
		}
		return putJSON(datasets, []byte(ds.ID), ds)
	})
	if err != nil {
		return Dataset{}, nil, fmt.Errorf("add items to dataset %s: %w", datasetID, err)
	}
	return ds, stored, nil
}

// ListDatasetItems lists the dataset's items newest first.
func (s *BoltStore) ListDatasetItems(datasetID string, p PageQuery) (Page[DatasetItem], error) {
	page, err := listIndexed[DatasetItem](s, bucketItemsByDataset, bucketDatasetItems, indexPrefix(datasetID), p)
	if err != nil {
		return Page[DatasetItem]{}, fmt.Errorf("list items of dataset %s: %w", datasetID, err)
	}
	return page, nil
}

// itemsUpTo reads the dataset's items of versions up to version, oldest
// first, which is the order an evaluation scores them in.
func itemsUpTo(tx *bolt.Tx, datasetID string, version int) ([]DatasetItem, error) {
	prefix := indexPrefix(datasetID)
	records := tx.Bucket(bucketDatasetItems)
	var items []DatasetItem
	c := tx.Bucket(bucketItemsByDataset).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var it DatasetItem
		if err := getJSON(records, v, &it); err != nil {
			return nil, fmt.Errorf("dataset item %s: %w", v, err)
		}
		if it.DatasetVersion <= version {
			items = append(items, it)
		}
	}
	return items, nil
}

// hasItems reports whether the dataset has at least one item.
func hasItems(tx *bolt.Tx, datasetID string) bool {
	prefix := indexPrefix(datasetID)
	k, _ := tx.Bucket(bucketItemsByDataset).Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// goldenItemForPrompt finds the newest item taken from a call with the
// prompt fingerprint fp that belongs to a golden dataset of the operation:
// the reference a served call with the same prompt is compared with.
func (s *BoltStore) goldenItemForPrompt(orgID, operationID, fp string) (DatasetItem, bool, error) {
	var found DatasetItem
	ok := false
	err := s.db.View(func(tx *bolt.Tx) error {
		records := tx.Bucket(bucketDatasetItems)
		datasets := tx.Bucket(bucketDatasets)
		return newestFirst(tx.Bucket(bucketItemsByPrompt), indexPrefix(orgID, fp), func(id []byte) (bool, error) {
			var it DatasetItem
			if err := getJSON(records, id, &it); err != nil {
				return false, fmt.Errorf("dataset item %s: %w", id, err)
			}
			if it.PromptFingerprint != fp {
				return true, nil
			}
			var ds Dataset
			if err := getJSON(datasets, []byte(it.DatasetID), &ds); err != nil {
				return false, fmt.Errorf("dataset %s: %w", it.DatasetID, err)
			}
			if ds.Status == DatasetGolden && ds.OperationID == operationID {
				found, ok = it, true
				return false, nil
			}
			return true, nil
		})
	})
	if err != nil {
		return DatasetItem{}, false, fmt.Errorf("find golden item for prompt %s: %w", fp, err)
	}
	return found, ok, nil
}
