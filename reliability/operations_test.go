package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestValidOperationKey(t *testing.T) {
	for key, want := range map[string]bool{
		"support_triage":         true,
		"a":                      true,
		"v2_summary_9":           true,
		strings.Repeat("k", 128): true,
		strings.Repeat("k", 129): false,
		"":                       false,
		"Support":                false,
		"with-dash":              false,
		"with space":             false,
		"nul\x00":                false,
	} {
		if got := ValidOperationKey(key); got != want {
			t.Errorf("ValidOperationKey(%.20q) = %v, want %v", key, got, want)
		}
	}
}

func TestOperationCRUD(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	org, _ := s.EnsureOrg("acme")
	op := &Operation{OrgID: org.ID, Key: "support_triage", Name: "Support triage"}
	if err := s.CreateOperation(op); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(op.ID, "op_") || op.Object != ObjectOperation || op.CreatedAt.IsZero() || op.ShipGates == nil {
		t.Fatalf("CreateOperation left %+v", op)
	}
	got, err := s.Operation(op.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(got)
	want := fmt.Sprintf(`{"id":%q,"object":"operation","org_id":%q,"key":"support_triage","name":"Support triage","description":null,"ship_gates":[],"created_at":%q}`,
		op.ID, org.ID, op.CreatedAt.Format("2006-01-02T15:04:05.999999999Z07:00"))
	if string(data) != want {
		t.Fatalf("stored operation\n got %s\nwant %s", data, want)
	}

	update := got
	update.Name = "Triage"
	update.Description = ptr("routes tickets")
	update.ShipGates = []ShipGate{{EvaluatorID: "evr_1", MinScore: 0.8}}
	update.Key = "renamed"
	update.OrgID = "org_other"
	if err := s.UpdateOperation(&update); err != nil {
		t.Fatal(err)
	}
	if update.Key != "support_triage" || update.OrgID != org.ID {
		t.Fatalf("UpdateOperation changed immutable fields: %+v", update)
	}
	got, err = s.Operation(op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Triage" || got.Description == nil || *got.Description != "routes tickets" ||
		!slices.Equal(got.ShipGates, update.ShipGates) || got.Key != "support_triage" || !got.CreatedAt.Equal(op.CreatedAt) {
		t.Fatalf("after update: %+v", got)
	}
	cleared := got
	cleared.Description, cleared.ShipGates = nil, nil
	if err := s.UpdateOperation(&cleared); err != nil {
		t.Fatal(err)
	}
	if cleared.Description != nil || cleared.ShipGates == nil || len(cleared.ShipGates) != 0 {
		t.Fatalf("clearing description and gates gave %+v", cleared)
	}

	if _, err := s.Operation("op_missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Operation of a missing id: %v", err)
	}
	if err := s.UpdateOperation(&Operation{ID: "op_missing", Name: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateOperation of a missing id: %v", err)
	}
}

func TestCreateOperationRules(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	if err := s.CreateOperation(&Operation{OrgID: a.ID, Key: "summarize", Name: "S"}); err != nil {
		t.Fatal(err)
	}
	dup := &Operation{OrgID: a.ID, Key: "summarize", Name: "again"}
	if err := s.CreateOperation(dup); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate key in one org: %v, want ErrConflict", err)
	}
	if dup.ID != "" {
		t.Fatalf("a refused operation was given id %s", dup.ID)
	}
	if err := s.CreateOperation(&Operation{OrgID: b.ID, Key: "summarize", Name: "S"}); err != nil {
		t.Fatalf("same key in another org: %v", err)
	}
	if err := s.CreateOperation(&Operation{OrgID: "org_missing", Key: "summarize"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("operation of a missing org: %v, want ErrNotFound", err)
	}
	if err := s.CreateOperation(&Operation{OrgID: a.ID, Key: "Bad-Key"}); err == nil {
		t.Fatal("an invalid key was accepted")
	}
	if err := s.CreateOperation(nil); err == nil {
		t.Fatal("a nil operation was accepted")
	}
}

func TestResolveOperation(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	opA := &Operation{OrgID: a.ID, Key: "triage", Name: "A"}
	opB := &Operation{OrgID: b.ID, Key: "triage", Name: "B"}
	for _, op := range []*Operation{opA, opB} {
		if err := s.CreateOperation(op); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{"triage", opA.ID} {
		got, err := s.ResolveOperation(a.ID, ref)
		if err != nil || got.ID != opA.ID {
			t.Fatalf("ResolveOperation(a, %q) = %s, %v; want %s", ref, got.ID, err, opA.ID)
		}
	}
	if got, err := s.ResolveOperation(b.ID, "triage"); err != nil || got.ID != opB.ID {
		t.Fatalf("ResolveOperation(b, triage) = %s, %v; want %s", got.ID, err, opB.ID)
	}
	if _, err := s.ResolveOperation(a.ID, opB.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("org a resolved org b's operation id: %v", err)
	}
	if _, err := s.ResolveOperation(a.ID, "unknown"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown key: %v, want ErrNotFound", err)
	}
}

func TestListOperations(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	a, _ := s.EnsureOrg("a")
	b, _ := s.EnsureOrg("b")
	var want []string
	for i := range 7 {
		op := &Operation{OrgID: a.ID, Key: fmt.Sprintf("op_%d", i), Name: "n"}
		if err := s.CreateOperation(op); err != nil {
			t.Fatal(err)
		}
		want = append([]string{op.ID}, want...)
	}
	if err := s.CreateOperation(&Operation{OrgID: b.ID, Key: "elsewhere", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	q := PageQuery{Limit: 3}
	for {
		page, err := s.ListOperations(a.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range page.Data {
			got = append(got, op.ID)
		}
		if !page.HasMore {
			break
		}
		q.Cursor = *page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListOperations = %v, want %v", got, want)
	}
	if _, err := s.ListOperations(a.ID, PageQuery{Cursor: "%%"}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("bad cursor: %v, want ErrBadCursor", err)
	}
}
