package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Targets of the simulation: routed traffic should cost at most
// 1 - targetSavingPct/100 of always pinning the reference, while the
// answers keep the gate's pass rate.
const targetSavingPct = 40.0

// unrecorded names the served model of an answered call whose record the
// gateway did not return.
const unrecorded = "(unrecorded)"

// report is the simulation's outcome; its JSON form is the -json output.
type report struct {
	Settings settingsReport `json:"settings"`
	Calls    callsReport    `json:"calls"`
	Cost     costReport     `json:"cost"`
	PassRate passReport     `json:"pass_rate"`
	// Served is the share of answered calls per served model, over the
	// whole run, in catalog order (unknown models last).
	Served []modelShare `json:"served"`
	// Windows is the traffic over time, in windows of Settings.Window calls.
	Windows []windowReport `json:"windows"`
	// CheaperPassing lists the pool models cheaper than the reference whose
	// quality passes the gate.
	CheaperPassing []string `json:"cheaper_passing"`
	// CallsToLearn is the end of the first window in which at least half
	// of the answered calls were served by CheaperPassing models; nil when
	// no window got there.
	CallsToLearn *int `json:"calls_to_learn"`
	// CheapestPassing is the cheapest of CheaperPassing.
	CheapestPassing string `json:"cheapest_passing"`
	// CheapestMajorityAt is the end of the first window in which
	// CheapestPassing alone served at least half of the answered calls;
	// nil when no window got there.
	CheapestMajorityAt *int         `json:"cheapest_majority_at"`
	Target             targetReport `json:"target"`
	ElapsedS           float64      `json:"elapsed_s"`
}

type settingsReport struct {
	Calls          int         `json:"n"`
	Concurrency    int         `json:"concurrency"`
	Window         int         `json:"window"`
	Seed           uint64      `json:"seed"`
	Router         string      `json:"router"`
	Reference      string      `json:"reference"`
	Explore        float64     `json:"explore"`
	GateMinScore   float64     `json:"gate_min_score"`
	Models         []modelInfo `json:"models"`
	ReferencePrice [2]float64  `json:"reference_price"`
}

type modelInfo struct {
	ID         string  `json:"id"`
	PriceIn    float64 `json:"price_in"`
	PriceOut   float64 `json:"price_out"`
	Quality    int     `json:"quality"`
	PassesGate bool    `json:"passes_gate"`
	Reference  bool    `json:"reference"`
}

type callsReport struct {
	Sent     int `json:"sent"`
	Answered int `json:"answered"`
	Failed   int `json:"failed"`
	// Unrecorded counts answered calls whose record the gateway did not
	// return, so their served model is unknown.
	Unrecorded int `json:"unrecorded"`
	// EvalScheduled counts answers whose delivery said the eval pass
	// will score them.
	EvalScheduled int            `json:"eval_scheduled"`
	Upgraded      int            `json:"upgraded"`
	Tiers         map[string]int `json:"tiers"`
	Providers     map[string]int `json:"providers"`
	Errors        []errorCount   `json:"errors,omitempty"`
}

type errorCount struct {
	Error string `json:"error"`
	Count int    `json:"count"`
}

type costReport struct {
	// BilledUSD sums delivery.cost_usd of the priced answers.
	BilledUSD float64 `json:"billed_usd"`
	// ReferenceUSD is what the same token counts cost at the reference's
	// direct price: what pinning the reference would have billed.
	ReferenceUSD float64 `json:"reference_usd"`
	// RoutedCeilingUSD is 95% of ReferenceUSD, the most a routed call may
	// bill.
	RoutedCeilingUSD float64 `json:"routed_ceiling_usd"`
	// SavingPct is 100 * (1 - BilledUSD/ReferenceUSD).
	SavingPct float64 `json:"saving_pct"`
	// UpstreamUSD sums the call records' upstream_cost_usd: what the
	// served models' own prices make the traffic cost the gateway.
	UpstreamUSD float64 `json:"upstream_usd"`
	// UpstreamSavingPct is 100 * (1 - UpstreamUSD/ReferenceUSD), over the
	// calls whose record has an upstream cost.
	UpstreamSavingPct float64 `json:"upstream_saving_pct"`
	// Unpriced counts answers with a null cost_usd, left out of the sums.
	Unpriced int `json:"unpriced"`
}

type passReport struct {
	Overall  float64 `json:"overall"`
	LastHalf float64 `json:"last_half"`
}

type modelShare struct {
	Model string  `json:"model"`
	Calls int     `json:"calls"`
	Share float64 `json:"share"`
	// PassRate is the share of this model's answers that start "Echo: ".
	PassRate float64 `json:"pass_rate"`
}

type windowReport struct {
	// From and To are the window's first and last call, counting from 1.
	From     int `json:"from"`
	To       int `json:"to"`
	Answered int `json:"answered"`
	// Shares maps each served model to its share of the window's answers.
	Shares    map[string]float64 `json:"shares"`
	PassRate  float64            `json:"pass_rate"`
	SavingPct float64            `json:"saving_pct"`
	// EndS is when the window's last answer arrived, in seconds from the
	// first call sent.
	EndS float64 `json:"end_s"`
}

type targetReport struct {
	MinSavingPct float64 `json:"min_saving_pct"`
	MinPassRate  float64 `json:"min_pass_rate"`
	SavingMet    bool    `json:"saving_met"`
	PassRateMet  bool    `json:"pass_rate_met"`
	Verdict      string  `json:"verdict"`
}

// tally accumulates the figures of a run of results.
type tally struct {
	answered, correct int
	billed, reference float64
	// upstream and upstreamRef are the upstream costs and the reference
	// cost of the same calls, those whose record has an upstream cost.
	upstream, upstreamRef float64
	byModel               map[string]int
	correctByModel        map[string]int
}

func (t *tally) add(r *result, ref simModel) {
	if !r.ok() {
		return
	}
	t.answered++
	if r.correct {
		t.correct++
	}
	if r.cost != nil {
		t.billed += *r.cost
		t.reference += ref.cost(r.promptTokens, r.completionTokens)
	}
	if r.upstreamCost != nil {
		t.upstream += *r.upstreamCost
		t.upstreamRef += ref.cost(r.promptTokens, r.completionTokens)
	}
	if t.byModel == nil {
		t.byModel, t.correctByModel = map[string]int{}, map[string]int{}
	}
	t.byModel[servedName(r)]++
	if r.correct {
		t.correctByModel[servedName(r)]++
	}
}

func (t *tally) passRate() float64 { return ratio(t.correct, t.answered) }

func (t *tally) savingPct() float64 { return savingPct(t.billed, t.reference) }

// savingPct is how much cheaper cost is than reference, in percent; 0 when
// there is no reference cost to compare with.
func savingPct(cost, reference float64) float64 {
	if reference == 0 {
		return 0
	}
	return 100 * (1 - cost/reference)
}

func servedName(r *result) string {
	if r.served == "" {
		return unrecorded
	}
	return r.served
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// analyze turns the results, in send order, into the report's figures.
func analyze(results []result, models []simModel, window int) report {
	ref := referenceModel(models)
	var rep report
	rep.Settings = settingsReport{
		Calls: len(results), Window: window, Router: routerModel, Reference: ref.id(),
		Explore: explore, GateMinScore: gateMinScore, ReferencePrice: [2]float64{ref.priceIn, ref.priceOut},
	}
	for _, m := range models {
		rep.Settings.Models = append(rep.Settings.Models, modelInfo{
			ID: m.id(), PriceIn: m.priceIn, PriceOut: m.priceOut, Quality: m.quality,
			PassesGate: m.passesGate(), Reference: m.reference,
		})
	}

	c := &rep.Calls
	c.Sent = len(results)
	c.Tiers, c.Providers = map[string]int{}, map[string]int{}
	errs := map[string]int{}
	var all, lastHalf tally
	for i := range results {
		r := &results[i]
		all.add(r, ref)
		if i >= len(results)/2 {
			lastHalf.add(r, ref)
		}
		if !r.ok() {
			c.Failed++
			errs[r.err]++
			continue
		}
		c.Answered++
		if r.served == "" {
			c.Unrecorded++
		}
		if r.scheduled {
			c.EvalScheduled++
		}
		if r.upgraded {
			c.Upgraded++
		}
		if r.cost == nil {
			rep.Cost.Unpriced++
		}
		c.Tiers[r.tier]++
		c.Providers[r.provider]++
	}
	for e, n := range errs {
		c.Errors = append(c.Errors, errorCount{Error: e, Count: n})
	}
	sort.Slice(c.Errors, func(i, j int) bool {
		if c.Errors[i].Count != c.Errors[j].Count {
			return c.Errors[i].Count > c.Errors[j].Count
		}
		return c.Errors[i].Error < c.Errors[j].Error
	})

	rep.Cost.BilledUSD = all.billed
	rep.Cost.ReferenceUSD = all.reference
	rep.Cost.RoutedCeilingUSD = 0.95 * all.reference
	rep.Cost.SavingPct = all.savingPct()
	rep.Cost.UpstreamUSD = all.upstream
	rep.Cost.UpstreamSavingPct = savingPct(all.upstream, all.upstreamRef)
	rep.PassRate = passReport{Overall: all.passRate(), LastHalf: lastHalf.passRate()}

	names := modelOrder(models, all.byModel)
	for _, name := range names {
		rep.Served = append(rep.Served, modelShare{Model: name, Calls: all.byModel[name],
			Share: ratio(all.byModel[name], all.answered), PassRate: ratio(all.correctByModel[name], all.byModel[name])})
	}

	cheaper := map[string]bool{}
	for _, m := range models {
		if !m.reference && m.passesGate() {
			cheaper[m.name] = true
			rep.CheaperPassing = append(rep.CheaperPassing, m.name)
		}
	}
	cheapest, hasCheapest := cheapestPassing(models)
	if hasCheapest {
		rep.CheapestPassing = cheapest.name
	}
	for from := 0; from < len(results) && window > 0; from += window {
		to := min(from+window, len(results))
		var w tally
		var end float64
		for i := from; i < to; i++ {
			w.add(&results[i], ref)
			end = max(end, results[i].at.Seconds())
		}
		wr := windowReport{From: from + 1, To: to, Answered: w.answered, Shares: map[string]float64{},
			PassRate: w.passRate(), SavingPct: w.savingPct(), EndS: end}
		onCheaper := 0
		for name, n := range w.byModel {
			wr.Shares[name] = ratio(n, w.answered)
			if cheaper[name] {
				onCheaper += n
			}
		}
		rep.Windows = append(rep.Windows, wr)
		if rep.CallsToLearn == nil && w.answered > 0 && ratio(onCheaper, w.answered) >= 0.5 {
			rep.CallsToLearn = &wr.To
		}
		if rep.CheapestMajorityAt == nil && hasCheapest && w.answered > 0 && wr.Shares[cheapest.name] >= 0.5 {
			rep.CheapestMajorityAt = &wr.To
		}
	}

	t := &rep.Target
	t.MinSavingPct, t.MinPassRate = targetSavingPct, gateMinScore
	t.SavingMet = all.reference > 0 && rep.Cost.SavingPct >= targetSavingPct
	t.PassRateMet = all.answered > 0 && rep.PassRate.Overall >= gateMinScore
	t.Verdict = "FAIL"
	if t.SavingMet && t.PassRateMet {
		t.Verdict = "PASS"
	}
	return rep
}

// modelOrder lists the catalog's models, then any other served names
// sorted, so that tables keep one column order from run to run.
func modelOrder(models []simModel, seen map[string]int) []string {
	var names []string
	for _, m := range models {
		names = append(names, m.name)
	}
	var extra []string
	for name := range seen {
		if !slices.Contains(names, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// printReport writes the report as text.
func printReport(w io.Writer, rep *report) {
	s := rep.Settings
	fmt.Fprintf(w, "routesim: %s, reference %s, gate \"^Echo: \" >= %.2f, explore %g\n", s.Router, s.Reference, s.GateMinScore, s.Explore)
	fmt.Fprintf(w, "%d calls, concurrency %d, window %d, seed %d, %.1fs\n\n", s.Calls, s.Concurrency, s.Window, s.Seed, rep.ElapsedS)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tprice in/out per 1M\tquality\tpasses gate\t")
	for _, m := range s.Models {
		role := ""
		if m.Reference {
			role = " (reference)"
		}
		fmt.Fprintf(tw, "%s%s\t%g / %g\t%d%%\t%v\t\n", m.ID, role, m.PriceIn, m.PriceOut, m.Quality, m.PassesGate)
	}
	tw.Flush()

	c := rep.Calls
	fmt.Fprintf(w, "\ncalls: %d sent, %d answered, %d failed, %d without a record; eval pass scheduled on %d; upgraded %d\n",
		c.Sent, c.Answered, c.Failed, c.Unrecorded, c.EvalScheduled, c.Upgraded)
	fmt.Fprintf(w, "tiers: %s; delivery.provider: %s\n", counts(c.Tiers), counts(c.Providers))
	for i, e := range c.Errors {
		if i == 5 {
			fmt.Fprintf(w, "  ... %d more kinds of error\n", len(c.Errors)-i)
			break
		}
		fmt.Fprintf(w, "  error x%d: %s\n", e.Count, e.Error)
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "billed (sum of delivery.cost_usd)\t$%.6f\n", rep.Cost.BilledUSD)
	fmt.Fprintf(tw, "always %s (same tokens at its pinned price)\t$%.6f\n", s.Reference, rep.Cost.ReferenceUSD)
	fmt.Fprintf(tw, "routed ceiling (95%% of that)\t$%.6f\n", rep.Cost.RoutedCeilingUSD)
	fmt.Fprintf(tw, "saving vs always-reference\t%.1f%%\n", rep.Cost.SavingPct)
	fmt.Fprintf(tw, "upstream cost (records' upstream_cost_usd)\t$%.6f, %.1f%% below the reference's price\n",
		rep.Cost.UpstreamUSD, rep.Cost.UpstreamSavingPct)
	fmt.Fprintf(tw, "gate pass rate (answer starts \"Echo: \")\t%.3f overall, %.3f over the last half\n", rep.PassRate.Overall, rep.PassRate.LastHalf)
	tw.Flush()
	if rep.Cost.Unpriced > 0 {
		fmt.Fprintf(w, "(%d answers had a null cost_usd and are left out of both sums)\n", rep.Cost.Unpriced)
	}
	fmt.Fprintf(w, "\ntraffic by served model, per window of %d calls:\n", s.Window)
	names := make([]string, 0, len(rep.Served))
	for _, m := range rep.Served {
		names = append(names, m.Model)
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "calls\t%s\tpass\tsaving\tends at\t\n", strings.Join(names, "\t"))
	for _, win := range rep.Windows {
		fmt.Fprintf(tw, "%d-%d\t", win.From, win.To)
		for _, name := range names {
			fmt.Fprintf(tw, "%.1f%%\t", 100*win.Shares[name])
		}
		fmt.Fprintf(tw, "%.3f\t%.1f%%\t%.2fs\t\n", win.PassRate, win.SavingPct, win.EndS)
	}
	fmt.Fprintf(tw, "all\t")
	for _, m := range rep.Served {
		fmt.Fprintf(tw, "%.1f%%\t", 100*m.Share)
	}
	fmt.Fprintf(tw, "%.3f\t%.1f%%\t\t\n", rep.PassRate.Overall, rep.Cost.SavingPct)
	fmt.Fprintf(tw, "calls\t")
	for _, m := range rep.Served {
		fmt.Fprintf(tw, "%d\t", m.Calls)
	}
	fmt.Fprintf(tw, "\t\t\t\n")
	fmt.Fprintf(tw, "pass\t")
	for _, m := range rep.Served {
		if m.Calls == 0 {
			fmt.Fprintf(tw, "-\t")
			continue
		}
		fmt.Fprintf(tw, "%.3f\t", m.PassRate)
	}
	fmt.Fprintf(tw, "\t\t\t\n")
	tw.Flush()

	fmt.Fprintln(w)
	fmt.Fprintf(w, "calls to learn (first window with >= 50%% served by %s): %s\n",
		strings.Join(rep.CheaperPassing, " or "), callsAt(rep.CallsToLearn))
	if rep.CheapestPassing != "" {
		fmt.Fprintf(w, "cheapest passing model %s carries >= 50%% from: %s\n", rep.CheapestPassing, callsAt(rep.CheapestMajorityAt))
	}

	t := rep.Target
	fmt.Fprintf(w, "\ntarget: at least %.0f%% cheaper than always-reference, at a pass rate >= %.2f\n", t.MinSavingPct, t.MinPassRate)
	fmt.Fprintf(w, "%s: saving %.1f%% (%s), pass rate %.3f (%s)\n", t.Verdict,
		rep.Cost.SavingPct, met(t.SavingMet), rep.PassRate.Overall, met(t.PassRateMet))
}

func callsAt(n *int) string {
	if n == nil {
		return "never within the run"
	}
	return fmt.Sprintf("call %d", *n)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// counts formats a histogram as "a 3, b 1", largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
