package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixture is a store with an org and an operation, the start of most
// domain tests.
type fixture struct {
	s   *BoltStore
	org Org
	op  Operation
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s, _ := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	op := Operation{OrgID: org.ID, Key: "support", Name: "Support"}
	if err := s.CreateOperation(&op); err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, org: org, op: op}
}

// evaluator stores an evaluator of the fixture's org.
func (f *fixture) evaluator(t *testing.T, kind, config string) Evaluator {
	t.Helper()
	ev := Evaluator{OrgID: f.org.ID, Name: kind, Kind: kind, Config: json.RawMessage(config)}
	if err := f.s.CreateEvaluator(&ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// dataset stores a dataset of the fixture's operation with items, if any.
func (f *fixture) dataset(t *testing.T, items ...DatasetItem) Dataset {
	t.Helper()
	ds := Dataset{OrgID: f.org.ID, OperationID: f.op.ID, Name: "cases"}
	if err := f.s.CreateDataset(&ds); err != nil {
		t.Fatal(err)
	}
	if len(items) > 0 {
		var err error
		if ds, _, err = f.s.AddDatasetItems(ds.ID, items); err != nil {
			t.Fatal(err)
		}
	}
	return ds
}

// gates sets the fixture operation's ship gates.
func (f *fixture) gates(t *testing.T, gates ...ShipGate) {
	t.Helper()
	op, err := f.s.PatchOperation(f.op.ID, OperationUpdate{ShipGates: &gates})
	if err != nil {
		t.Fatal(err)
	}
	f.op = op
}

// item is a dataset item with JSON input and expected output.
func item(input, expected string, weight float64) DatasetItem {
	return DatasetItem{Input: json.RawMessage(input), ExpectedOutput: json.RawMessage(expected), Weight: weight}
}

func TestDatasetVersionsAndFreeze(t *testing.T) {
	f := newFixture(t)
	ds := f.dataset(t)
	if !strings.HasPrefix(ds.ID, "ds_") || ds.Object != ObjectDataset || ds.Version != 1 || ds.Status != DatasetDraft || ds.PromotedAt != nil {
		t.Fatalf("created %+v", ds)
	}
	ds2, items, err := f.s.AddDatasetItems(ds.ID, []DatasetItem{item(`"a"`, `"A"`, 1), item(`"b"`, `"B"`, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if ds2.Version != 2 || len(items) != 2 || items[0].DatasetVersion != 2 || items[1].Weight != 2 ||
		!strings.HasPrefix(items[0].ID, "dsi_") || items[0].Object != ObjectDatasetItem || items[0].DatasetID != ds.ID {
		t.Fatalf("after add: %+v %+v", ds2, items)
	}
	ds3, _, err := f.s.AddDatasetItems(ds.ID, []DatasetItem{item(`"c"`, `"C"`, 1)})
	if err != nil || ds3.Version != 3 {
		t.Fatalf("second add: %+v, %v", ds3, err)
	}
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.s.AddDatasetItems(ds.ID, []DatasetItem{item(`"d"`, `"D"`, 1)})
	var verr *ValidationError
	if !errors.As(err, &verr) || verr.Code != CodeDatasetFrozen {
		t.Fatalf("add to golden: %v, want dataset_frozen", err)
	}
	got, _ := f.s.Dataset(ds.ID)
	if got.Version != 3 || got.Status != DatasetGolden {
		t.Fatalf("golden dataset changed: %+v", got)
	}
	if _, _, err := f.s.AddDatasetItems(ds.ID, nil); err == nil {
		t.Fatal("an empty add was accepted")
	}
	if _, _, err := f.s.AddDatasetItems("ds_missing", []DatasetItem{{}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("add to a missing dataset: %v", err)
	}
}

func TestCreateDatasetChecksOperation(t *testing.T) {
	f := newFixture(t)
	other, _ := f.s.EnsureOrg("other")
	ds := Dataset{OrgID: other.ID, OperationID: f.op.ID, Name: "x"}
	if err := f.s.CreateDataset(&ds); !errors.Is(err, ErrForbidden) {
		t.Fatalf("dataset on another org's operation: %v", err)
	}
	ds = Dataset{OrgID: f.org.ID, OperationID: "op_missing", Name: "x"}
	if err := f.s.CreateDataset(&ds); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dataset on a missing operation: %v", err)
	}
}

func TestDatasetItemFromCallCopiesFingerprint(t *testing.T) {
	f := newFixture(t)
	c := testCall("", f.org.ID, &f.op.ID, time.Now())
	c.Delivery = json.RawMessage(`{"fingerprints":{"prompt":"fp_p_abc"}}`)
	f.s.RecordCall(c)
	ds := f.dataset(t)
	_, items, err := f.s.AddDatasetItems(ds.ID, []DatasetItem{{SourceCallID: &c.ID, ExpectedOutput: json.RawMessage(`"ok"`), Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if items[0].PromptFingerprint != "fp_p_abc" || *items[0].SourceCallID != c.ID {
		t.Fatalf("item = %+v", items[0])
	}
	if _, found, _ := f.s.goldenItemForPrompt(f.org.ID, f.op.ID, "fp_p_abc"); found {
		t.Fatal("a draft dataset's item served as the reference")
	}
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, found, err := f.s.goldenItemForPrompt(f.org.ID, f.op.ID, "fp_p_abc")
	if err != nil || !found || got.ID != items[0].ID {
		t.Fatalf("goldenItemForPrompt = %+v, %v, %v", got, found, err)
	}
	if _, found, _ := f.s.goldenItemForPrompt(f.org.ID, "op_other", "fp_p_abc"); found {
		t.Fatal("another operation's item served as the reference")
	}
	if _, found, _ := f.s.goldenItemForPrompt(f.org.ID, f.op.ID, "fp_p_ab"); found {
		t.Fatal("a prefix of the fingerprint matched")
	}

	other, _ := f.s.EnsureOrg("other")
	foreign := testCall("", other.ID, nil, time.Now())
	f.s.RecordCall(foreign)
	ds2 := f.dataset(t)
	if _, _, err := f.s.AddDatasetItems(ds2.ID, []DatasetItem{{SourceCallID: &foreign.ID}}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("item from another org's call: %v", err)
	}
	missing := "call_missing"
	if _, _, err := f.s.AddDatasetItems(ds2.ID, []DatasetItem{{SourceCallID: &missing}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("item from a missing call: %v", err)
	}
	if got, _ := f.s.Dataset(ds2.ID); got.Version != 1 {
		t.Fatalf("a refused add changed the version: %d", got.Version)
	}
}

func TestListDatasetsAndItemsNewestFirst(t *testing.T) {
	f := newFixture(t)
	var dsIDs []string
	for range 3 {
		dsIDs = append([]string{f.dataset(t).ID}, dsIDs...)
	}
	page, err := f.s.ListDatasets(f.org.ID, PageQuery{Limit: 2})
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].ID != dsIDs[0] {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	page, err = f.s.ListDatasets(f.org.ID, PageQuery{Limit: 2, Cursor: *page.NextCursor})
	if err != nil || len(page.Data) != 1 || page.HasMore || page.Data[0].ID != dsIDs[2] || page.NextCursor != nil {
		t.Fatalf("second page = %+v, %v", page, err)
	}

	var items []DatasetItem
	for i := range 5 {
		items = append(items, item(fmt.Sprintf(`"q%d"`, i), `"a"`, 1))
	}
	_, stored, err := f.s.AddDatasetItems(dsIDs[0], items)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	q := PageQuery{Limit: 2}
	for {
		p, err := f.s.ListDatasetItems(dsIDs[0], q)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Data {
			got = append(got, it.ID)
		}
		if !p.HasMore {
			break
		}
		q.Cursor = *p.NextCursor
	}
	var want []string
	for _, it := range stored {
		want = append([]string{it.ID}, want...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("items = %v, want newest first %v", got, want)
	}
}
