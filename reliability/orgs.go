package reliability

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Plans an org can be on; the plan decides which refunds apply.
const (
	// PlanFree is the plan of every new org.
	PlanFree = "free"
	// PlanPaid adds the eval-gated refund.
	PlanPaid = "paid"
)

// Org is a customer: the owner of keys, calls, operations and credit.
type Org struct {
	// ID is the org's id, prefix "org_".
	ID string `json:"id"`
	// Name is unique among orgs; EnsureOrg finds an org by it.
	Name string `json:"name"`
	// Plan is PlanFree or PlanPaid.
	Plan string `json:"plan"`
	// CreatedAt is when the org was created.
	CreatedAt time.Time `json:"created_at"`
}

// EnsureOrg returns the org named name, creating it on the free plan when
// absent. Find and create share one transaction, so concurrent callers
// with the same name all get the same org. A new org's starting credit
// (StartingCreditUSD) is written as a top-up entry in that transaction, so
// an org never exists without it and never gets it twice.
func (s *BoltStore) EnsureOrg(name string) (Org, error) {
	if name == "" {
		return Org{}, errors.New("ensure org: name is empty")
	}
	var org Org
	err := s.db.Update(func(tx *bolt.Tx) error {
		orgs := tx.Bucket(bucketOrgs)
		names := tx.Bucket(bucketOrgNames)
		if id := names.Get([]byte(name)); id != nil {
			return getJSON(orgs, id, &org)
		}
		org = Org{ID: NewID("org_"), Name: name, Plan: PlanFree, CreatedAt: time.Now().UTC()}
		if err := putJSON(orgs, []byte(org.ID), org); err != nil {
			return err
		}
		if err := names.Put([]byte(name), []byte(org.ID)); err != nil {
			return err
		}
		credit, err := toNanos(StartingCreditUSD)
		if err != nil {
			return err
		}
		_, err = appendLedger(tx, org.ID, LedgerTopup, credit, nil, "starting credit", org.CreatedAt)
		return err
	})
	if err != nil {
		return Org{}, fmt.Errorf("ensure org %q: %w", name, err)
	}
	return org, nil
}

// Org returns the org with this id.
func (s *BoltStore) Org(id string) (Org, error) {
	var org Org
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketOrgs), []byte(id), &org)
	})
	if err != nil {
		return Org{}, fmt.Errorf("org %s: %w", id, err)
	}
	return org, nil
}

// SetOrgPlan moves the org to plan, PlanFree or PlanPaid, and returns it.
// The plan is configuration the gateway keeps in step with its config.
func (s *BoltStore) SetOrgPlan(orgID, plan string) (Org, error) {
	if plan != PlanFree && plan != PlanPaid {
		return Org{}, fmt.Errorf("set plan of org %s: plan %q is not %q or %q", orgID, plan, PlanFree, PlanPaid)
	}
	var org Org
	err := s.db.Update(func(tx *bolt.Tx) error {
		orgs := tx.Bucket(bucketOrgs)
		if err := getJSON(orgs, []byte(orgID), &org); err != nil {
			return err
		}
		if org.Plan == plan {
			return nil
		}
		org.Plan = plan
		return putJSON(orgs, []byte(orgID), org)
	})
	if err != nil {
		return Org{}, fmt.Errorf("set plan of org %s: %w", orgID, err)
	}
	return org, nil
}
