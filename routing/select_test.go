package routing

import (
	"errors"
	"slices"
	"testing"

	"github.com/modelgate/gateway/translate"
)

func TestSelect(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		name     string
		model    string
		k        Constraints
		want     []string
		tier     string
		upgraded bool
		err      error
		param    string
	}{
		{name: "declared order at the tier", model: "meta/llama-70b", k: Constraints{Tier: "standard"},
			want: []string{keyRefFull, keyPartnerFull, keyPartnerQ4}, tier: "standard"},
		{name: "realtime", model: "meta/llama-70b", k: Constraints{Tier: "realtime"}, want: []string{keyRefFull}, tier: "realtime"},
		{name: "forbid_atlas_network", model: "meta/llama-70b", k: Constraints{Tier: "batch", ForbidPartner: true}, want: []string{keyRefFull}, tier: "batch"},
		{name: "upgraded when no path serves the tier", model: "openai/gpt-now", k: Constraints{Tier: "batch"},
			want: []string{"openai/gpt-now@full"}, tier: "realtime", upgraded: true},
		{name: "tier_strict", model: "openai/gpt-now", k: Constraints{Tier: "batch", TierStrict: true}, err: ErrTierUnavailable, param: "tier"},
		{name: "quantization", model: "openai/embed-small", k: Constraints{Dialect: translate.Embeddings, Tier: "standard", Quantization: "q8"}, err: ErrNoPath, param: "quantization"},
		{name: "forbid_atlas_network and quantization leave nothing", model: "meta/llama-70b", k: Constraints{Tier: "batch", ForbidPartner: true, Quantization: "q4"}, err: ErrNoPath, param: "forbid_atlas_network"},
		{name: "embeddings model on chat", model: "openai/embed-small", k: Constraints{Tier: "standard"}, err: ErrNoPath, param: "model"},
		{name: "unknown", model: "meta/nope", k: Constraints{Tier: "standard"}, err: ErrUnknownModel},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.k.Dialect == 0 {
				tc.k.Dialect = translate.Chat
			}
			r, err := c.Select(tc.model, tc.k)
			if tc.err != nil {
				var pe *PathError
				if !errors.Is(err, tc.err) || (tc.param != "" && (!errors.As(err, &pe) || pe.Param != tc.param)) {
					t.Fatalf("error %v, want %v naming %q", err, tc.err, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys(r), tc.want) || r.Tier != tc.tier || r.Upgraded != tc.upgraded {
				t.Errorf("candidates %v tier %s upgraded %v", keys(r), r.Tier, r.Upgraded)
			}
			if r.Routed || r.Model.ID != tc.model || r.Reference != r.Model {
				t.Errorf("pinned route: routed %v model %s reference %v", r.Routed, r.Model.ID, r.Reference)
			}
			for _, cand := range r.Candidates {
				if cand.Model != r.Model || !belongs(cand) {
					t.Errorf("candidate %s not of the pinned model", PathKey(cand))
				}
			}
		})
	}
}

func TestRouteServed(t *testing.T) {
	c := testCatalog(t)
	ev := &Evidence{}
	feed(ev, "op_1", keySmall, 30, 0.1)
	r, err := c.SelectRouted("router-1", Constraints{Dialect: translate.Chat, Tier: "standard"}, Gating{OperationID: "op_1", Gates: gatesOf}, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model.ID != "local/llama-8b" {
		t.Fatalf("first candidate of %s", r.Model.ID)
	}
	s := r.Served(r.Candidates[2])
	if len(s.Candidates) != 1 || PathKey(s.Candidates[0]) != keyRefFull || s.Model.ID != "meta/llama-70b" || !s.Routed || s.Tier != "standard" {
		t.Errorf("served route %+v", s)
	}
	if len(r.Candidates) != 3 {
		t.Error("Served changed the route it was called on")
	}
}
