package reliability

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTrainingRequestNeedsGolden(t *testing.T) {
	f := newFixture(t)
	ds := f.dataset(t, item(`"q"`, `"a"`, 1))
	tr := TrainingRequest{OrgID: f.org.ID, DatasetID: ds.ID, RequestedByUserID: "key_1"}
	var verr *ValidationError
	if err := f.s.CreateTrainingRequest(&tr, []string{"sales@example.com"}); !errors.As(err, &verr) || verr.Code != CodeDatasetNotGolden {
		t.Fatalf("draft dataset: %v", err)
	}
	if pending, _ := f.s.PendingMail(); len(pending) != 0 {
		t.Fatal("a refused request wrote an email")
	}
	other, _ := f.s.EnsureOrg("other")
	tr = TrainingRequest{OrgID: other.ID, DatasetID: ds.ID}
	if err := f.s.CreateTrainingRequest(&tr, nil); !errors.Is(err, ErrForbidden) {
		t.Fatalf("another org's dataset: %v", err)
	}
	tr = TrainingRequest{OrgID: f.org.ID, DatasetID: "ds_missing"}
	if err := f.s.CreateTrainingRequest(&tr, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing dataset: %v", err)
	}
}

func TestTrainingRequestWritesEmailInTheSameTransaction(t *testing.T) {
	f := newFixture(t)
	ds := f.dataset(t, item(`"q"`, `"a"`, 1), item(`"r"`, `"b"`, 1))
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	notes := "please train on this"
	tr := TrainingRequest{OrgID: f.org.ID, DatasetID: ds.ID, RequestedByUserID: "key_1", Notes: &notes}
	if err := f.s.CreateTrainingRequest(&tr, []string{"sales@example.com"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tr.ID, "tr_") || tr.Object != ObjectTrainingRequest || tr.Status != TrainingRequested ||
		tr.DatasetVersion != 2 || tr.RequestedByUserID != "key_1" || !tr.UpdatedAt.Equal(tr.CreatedAt) {
		t.Fatalf("created %+v", tr)
	}
	pending, err := f.s.PendingMail()
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	m := pending[0]
	if m.To[0] != "sales@example.com" || !strings.Contains(m.Subject, tr.ID) {
		t.Fatalf("email = %+v", m)
	}
	for _, want := range []string{tr.ID, ds.ID, f.org.Name, f.op.Key, "version 2, 2 items", "key_1", notes} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("email body lacks %q:\n%s", want, m.Body)
		}
	}
	got, err := f.s.TrainingRequest(tr.ID)
	if err != nil || got.ID != tr.ID || *got.Notes != notes {
		t.Fatalf("stored %+v, %v", got, err)
	}

	quiet := TrainingRequest{OrgID: f.org.ID, DatasetID: ds.ID}
	if err := f.s.CreateTrainingRequest(&quiet, nil); err != nil {
		t.Fatal(err)
	}
	if pending, _ := f.s.PendingMail(); len(pending) != 1 {
		t.Fatal("a request without recipients wrote an email")
	}
	page, err := f.s.ListTrainingRequests(f.org.ID, PageQuery{})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != quiet.ID {
		t.Fatalf("list = %+v, %v", page, err)
	}
}

func TestSetTrainingStatus(t *testing.T) {
	f := newFixture(t)
	ds := f.dataset(t)
	if _, err := f.s.PromoteDataset(ds.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	tr := TrainingRequest{OrgID: f.org.ID, DatasetID: ds.ID, CreatedAt: time.Now().Add(-time.Hour)}
	if err := f.s.CreateTrainingRequest(&tr, nil); err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{TrainingReviewing, TrainingApproved, TrainingDeclined, TrainingCompleted, TrainingRequested} {
		got, err := f.s.SetTrainingStatus(tr.ID, status)
		if err != nil || got.Status != status || !got.UpdatedAt.After(tr.CreatedAt) {
			t.Fatalf("SetTrainingStatus(%s) = %+v, %v", status, got, err)
		}
	}
	var verr *ValidationError
	if _, err := f.s.SetTrainingStatus(tr.ID, "shipped"); !errors.As(err, &verr) || verr.Param != "status" {
		t.Fatalf("unknown status: %v", err)
	}
	if _, err := f.s.SetTrainingStatus("tr_missing", TrainingApproved); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing request: %v", err)
	}
}
