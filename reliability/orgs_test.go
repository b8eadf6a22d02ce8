package reliability

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestEnsureOrgIdempotent(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	first, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ID, "org_") || first.Name != "acme" || first.Plan != PlanFree || first.CreatedAt.IsZero() {
		t.Fatalf("EnsureOrg = %+v", first)
	}
	again, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("EnsureOrg again = %+v, want %+v", again, first)
	}
	other, err := s.EnsureOrg("globex")
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == first.ID {
		t.Fatal("two names share an org")
	}
	got, err := s.Org(first.ID)
	if err != nil || got != first {
		t.Fatalf("Org = %+v, %v; want %+v", got, err, first)
	}
	if _, err := s.Org("org_missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Org of a missing id: %v, want ErrNotFound", err)
	}
	if _, err := s.EnsureOrg(""); err == nil {
		t.Fatal("EnsureOrg accepted an empty name")
	}
}

func TestEnsureOrgConcurrent(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	ids := make([]string, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			org, err := s.EnsureOrg("racing")
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = org.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent EnsureOrg made several orgs: %v", ids)
		}
	}
}

func TestOrgSurvivesReopen(t *testing.T) {
	s, path := openTestStore(t, BoltOptions{})
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := reopenTestStore(t, path, BoltOptions{})
	again, err := s2.EnsureOrg("acme")
	if err != nil || again.ID != org.ID {
		t.Fatalf("EnsureOrg after reopen = %+v, %v; want id %s", again, err, org.ID)
	}
}
