package main

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// answered is a result served by model, billed cost, with 10 prompt and
// 10 completion tokens.
func answered(model string, correct bool, cost float64) result {
	return result{status: http.StatusOK, id: "chatcmpl-x", served: model, correct: correct,
		cost: ptr(cost), promptTokens: 10, completionTokens: 10, tier: "standard", provider: "demo"}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestAnalyze(t *testing.T) {
	ref := referenceModel(catalog)
	refCost := ref.cost(10, 10) // 10*10/1e6 + 10*30/1e6 = 0.0004
	if !near(refCost, 0.0004) {
		t.Fatalf("reference cost = %v", refCost)
	}
	// Window 1: all on the reference, billed at 95%. Window 2: 1 of 4 on
	// the cheap passing model. Window 3: 3 of 4 on it, one failed call.
	var rs []result
	for range 4 {
		rs = append(rs, answered("demo-ref", true, 0.95*refCost))
	}
	rs = append(rs, answered("demo-cheap-q90", false, 0.00004), answered("demo-bad-q50", false, 0.000008),
		answered("demo-ref", true, 0.95*refCost), answered("demo-mid-q97", true, 0.00012))
	rs = append(rs, answered("demo-cheap-q90", true, 0.00004), answered("demo-cheap-q90", true, 0.00004),
		answered("demo-cheap-q90", true, 0.00004), result{status: 429, err: "status 429 insufficient_quota: out of credit"})

	rep := analyze(rs, catalog, 4)
	if rep.Calls.Sent != 12 || rep.Calls.Answered != 11 || rep.Calls.Failed != 1 || len(rep.Calls.Errors) != 1 {
		t.Fatalf("calls = %+v", rep.Calls)
	}
	if !near(rep.PassRate.Overall, 9.0/11) || !near(rep.PassRate.LastHalf, 1) {
		t.Errorf("pass rate = %+v", rep.PassRate)
	}
	billed := 5*0.95*refCost + 4*0.00004 + 0.000008 + 0.00012
	if !near(rep.Cost.BilledUSD, billed) || !near(rep.Cost.ReferenceUSD, 11*refCost) {
		t.Errorf("cost = %+v, want billed %v", rep.Cost, billed)
	}
	if want := 100 * (1 - billed/(11*refCost)); !near(rep.Cost.SavingPct, want) {
		t.Errorf("saving = %v, want %v", rep.Cost.SavingPct, want)
	}
	if len(rep.Windows) != 3 || rep.Windows[2].From != 9 || rep.Windows[2].To != 12 || rep.Windows[2].Answered != 3 {
		t.Fatalf("windows = %+v", rep.Windows)
	}
	if w := rep.Windows[1]; !near(w.Shares["demo-cheap-q90"], 0.25) || !near(w.Shares["demo-ref"], 0.25) || !near(w.PassRate, 0.5) {
		t.Errorf("window 2 = %+v", w)
	}
	if w := rep.Windows[0]; !near(w.SavingPct, 5) {
		t.Errorf("window 1 saving = %v, want 5", w.SavingPct)
	}
	// Window 2 has mid and cheap at 50% together, which is a majority of
	// cheaper passing models; the cheapest alone gets there in window 3.
	if rep.CallsToLearn == nil || *rep.CallsToLearn != 8 {
		t.Errorf("calls to learn = %v, want 8", rep.CallsToLearn)
	}
	if rep.CheapestPassing != "demo-cheap-q90" || rep.CheapestMajorityAt == nil || *rep.CheapestMajorityAt != 12 {
		t.Errorf("cheapest %s majority at %v", rep.CheapestPassing, rep.CheapestMajorityAt)
	}
	// About 50% cheaper, but 9 of 11 answers pass: below the gate.
	if !rep.Target.SavingMet || rep.Target.PassRateMet || rep.Target.Verdict != "FAIL" {
		t.Errorf("target = %+v", rep.Target)
	}
}

func TestAnalyzeTarget(t *testing.T) {
	var rs []result
	for i := range 100 {
		rs = append(rs, answered("demo-cheap-q90", i%10 != 0, 0.00004))
	}
	rep := analyze(rs, catalog, 250)
	if len(rep.Windows) != 1 || rep.Target.Verdict != "PASS" || !near(rep.Cost.SavingPct, 90) {
		t.Errorf("report = %+v", rep)
	}
}

func TestAnalyzeNeverLearns(t *testing.T) {
	rs := []result{answered("demo-ref", true, 0.00038), answered("", true, 0.00038), {status: 0, err: "connection refused"}}
	rep := analyze(rs, catalog, 2)
	if rep.CallsToLearn != nil || rep.CheapestMajorityAt != nil || rep.Calls.Unrecorded != 1 {
		t.Errorf("report = %+v", rep)
	}
	if last := rep.Served[len(rep.Served)-1]; last.Model != unrecorded || last.Calls != 1 {
		t.Errorf("served = %+v", rep.Served)
	}
}

func TestCatalog(t *testing.T) {
	for _, m := range catalog {
		want := "-q" + fmt.Sprint(m.quality)
		if m.quality == 100 && !m.reference {
			t.Errorf("%s: a pool model should carry a grade", m.name)
		}
		if m.quality < 100 && !strings.HasSuffix(m.name, want) {
			t.Errorf("%s: quality %d does not match its name", m.name, m.quality)
		}
	}
	if m, ok := cheapestPassing(catalog); !ok || m.name != "demo-cheap-q90" {
		t.Errorf("cheapest passing = %+v", m)
	}
	src := simCaddyfile("/tmp/s.db", 1001, 1002, catalog)
	for _, want := range []string{
		"model demo/demo-bad-q50 {\n\t\t\tprice 0.2 0.6\n",
		"reference demo/demo-ref\n",
		"pool demo/demo-mid-q97 demo/demo-cheap-q90 demo/demo-bad-q50\n",
		"explore 0.1\n",
		"base_url http://127.0.0.1:1002/v1\n",
		"http://127.0.0.1:1001 {\n\tbind 127.0.0.1\n",
		"http://127.0.0.1:1002 {\n\tbind 127.0.0.1\n",
		"plan paid\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("Caddyfile lacks %q:\n%s", want, src)
		}
	}
}

func TestPrompts(t *testing.T) {
	a, b := prompts(500, 7), prompts(500, 7)
	seen := map[string]bool{}
	for i := range a {
		if a[i] != b[i] || seen[a[i]] || !strings.HasPrefix(a[i], fmt.Sprintf("question %d ", i+1)) {
			t.Fatalf("prompt %d: %q / %q", i, a[i], b[i])
		}
		seen[a[i]] = true
	}
}

func TestServedModel(t *testing.T) {
	cases := map[callRecord]string{
		{modelVersion: "demo-cheap-q90"}:                 "demo-cheap-q90",
		{pathKey: "demo/demo-mid-q97@full"}:              "demo-mid-q97",
		{modelVersion: "x", pathKey: "demo/demo-ref@q8"}: "x",
		{}: "",
	}
	for rec, want := range cases {
		if got := servedModel(rec); got != want {
			t.Errorf("servedModel(%+v) = %q, want %q", rec, got, want)
		}
	}
}

func TestAnalyzeUpstreamAndPerModel(t *testing.T) {
	ref := referenceModel(catalog)
	cheap := answered("demo-cheap-q90", true, 0.95*ref.cost(10, 10))
	cheap.upstreamCost = ptr(catalog[2].cost(10, 10))
	wrong := cheap
	wrong.correct = false
	noRecord := answered("demo-cheap-q90", true, 0.95*ref.cost(10, 10))
	rep := analyze([]result{cheap, wrong, noRecord}, catalog, 10)
	// Only the two calls with an upstream cost are compared: 1/10 of the
	// reference's price.
	if !near(rep.Cost.UpstreamUSD, 2*catalog[2].cost(10, 10)) || !near(rep.Cost.UpstreamSavingPct, 90) {
		t.Errorf("cost = %+v", rep.Cost)
	}
	if !near(rep.Cost.SavingPct, 5) {
		t.Errorf("saving = %v", rep.Cost.SavingPct)
	}
	for _, m := range rep.Served {
		if m.Model == "demo-cheap-q90" && (m.Calls != 3 || !near(m.PassRate, 2.0/3)) {
			t.Errorf("served = %+v", m)
		}
	}
}
