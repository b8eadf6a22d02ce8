package routing

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"testing"
)

func TestVerdict(t *testing.T) {
	one := []Gate{{EvaluatorID: "evr_a", MinScore: 0.8}}
	cases := []struct {
		name   string
		scores []float64
		gates  []Gate
		want   Verdict
	}{
		{"no samples", nil, one, Unknown},
		{"three perfect calls are not enough", repeat(1, 3), one, Unknown},
		{"19 samples are not enough", repeat(0.95, 19), one, Unknown},
		{"20 consistent samples pass", repeat(0.95, 20), one, Pass},
		{"20 consistently low samples fail", repeat(0.5, 20), one, Fail},
		{"exactly at min_score passes", repeat(0.8, 20), one, Pass},
		// Mean 0.85, but half the calls score 0.55: the lower bound is far
		// below 0.8 and the upper bound above it.
		{"noisy mean above min_score is unknown", alternate(1.15, 0.55, 20), one, Unknown},
		{"many samples tighten the bound", alternate(0.95, 0.75, 400), one, Pass},
		{"no gates is never a pass", repeat(1, 50), nil, Unknown},
		{"a gate with no samples keeps it unknown", repeat(0.95, 30), append([]Gate{{EvaluatorID: "evr_b", MinScore: 0.1}}, one...), Unknown},
		{"a failing gate fails whatever the others say", repeat(0.95, 30), append([]Gate{{EvaluatorID: "evr_a", MinScore: 0.99}}, one...), Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := &Evidence{}
			for _, s := range tc.scores {
				ev.Add("op", "p", "evr_a", s, s >= 0.8)
			}
			if got := ev.Verdict("op", "p", tc.gates); got != tc.want {
				t.Errorf("verdict %v, want %v", got, tc.want)
			}
		})
	}
	var none *Evidence
	if none.Verdict("op", "p", one) != Unknown {
		t.Error("nil evidence judged a path")
	}
}

func repeat(s float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func alternate(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a
		if i%2 == 1 {
			out[i] = b
		}
	}
	return out
}

func TestEvidenceConfig(t *testing.T) {
	gates := []Gate{{EvaluatorID: "e", MinScore: 0.8}}
	ev := &Evidence{MinSamples: 5, Z: 3}
	for _, s := range []float64{0.9, 0.9, 0.9, 0.9, 0.9} {
		ev.Add("op", "p", "e", s, true)
	}
	if ev.Verdict("op", "p", gates) != Pass {
		t.Error("MinSamples 5 not honoured")
	}
	ev.Add("op", "p", "e", 0.5, false)
	// mean 0.833, sd 0.163, se 0.0667: z 3 gives a lower bound of 0.63.
	if ev.Verdict("op", "p", gates) != Unknown {
		t.Error("Z 3 not honoured")
	}
	ev.Add("op", "p", "e", math.NaN(), false)
	ev.Add("op", "p", "e", math.Inf(1), true)
	st, ok := ev.Stats("op", "p", "e")
	if !ok || st.Samples != 6 || math.Abs(st.Mean-5.0/6) > 1e-9 || math.Abs(st.PassRate-5.0/6) > 1e-9 || st.Lower > st.Mean || st.Upper < st.Mean {
		t.Errorf("stats %+v", st)
	}
}

// Old evidence halves at the window, so a path whose upstream degrades
// fails within a window's worth of calls instead of never.
func TestEvidenceWindow(t *testing.T) {
	gates := []Gate{{EvaluatorID: "e", MinScore: 0.8}}
	ev := &Evidence{Window: 100}
	for range 1000 {
		ev.Add("op", "p", "e", 0.95, true)
	}
	if ev.Verdict("op", "p", gates) != Pass {
		t.Fatal("good path did not pass")
	}
	if st, _ := ev.Stats("op", "p", "e"); st.Samples > 100 {
		t.Errorf("samples %v beyond the window", st.Samples)
	}
	n := 0
	for ev.Verdict("op", "p", gates) != Fail {
		ev.Add("op", "p", "e", 0.3, false)
		n++
		if n > 200 {
			t.Fatal("degraded path still not failing after two windows")
		}
	}
}

func TestExchangeMemory(t *testing.T) {
	ev := &Evidence{MaxExchanges: 3}
	for i := range 3 {
		ev.RememberExchange(fmt.Sprint("fp", i), "op", fmt.Sprint("path", i))
	}
	if p, ok := ev.RememberedPath("fp0", "op"); !ok || p != "path0" {
		t.Fatalf("fp0: %q %v", p, ok)
	}
	if _, ok := ev.RememberedPath("fp0", "op_other"); ok {
		t.Error("memory leaked across operations")
	}
	// fp0 was just used: fp1 is the least recently used and goes.
	ev.RememberExchange("fp3", "op", "path3")
	if _, ok := ev.RememberedPath("fp1", "op"); ok {
		t.Error("least recently used entry kept")
	}
	for _, fp := range []string{"fp0", "fp2", "fp3"} {
		if _, ok := ev.RememberedPath(fp, "op"); !ok {
			t.Errorf("%s evicted", fp)
		}
	}
	ev.RememberExchange("fp2", "op", "path9")
	if p, _ := ev.RememberedPath("fp2", "op"); p != "path9" {
		t.Errorf("fp2 not updated: %q", p)
	}
	ev.ForgetExchange("fp2", "op")
	if _, ok := ev.RememberedPath("fp2", "op"); ok {
		t.Error("forgotten entry still remembered")
	}
	var none *Evidence
	if _, ok := none.RememberedPath("fp0", "op"); ok {
		t.Error("nil evidence remembered")
	}
}

func TestEvidenceSnapshot(t *testing.T) {
	ev := &Evidence{MaxExchanges: 10}
	gates := []Gate{{EvaluatorID: "e1", MinScore: 0.8}, {EvaluatorID: "e2", MinScore: 0.5}}
	for i := range 30 {
		ev.Add("op_1", keyPartnerQ4, "e1", 0.9+0.01*float64(i%3), true)
		ev.Add("op_1", keyPartnerQ4, "e2", 0.6, true)
		ev.Add("op_2", keySmall, "e1", 0.2, false)
	}
	for i := range 5 {
		ev.RememberExchange(fmt.Sprint("fp", i), "op_1", keyPartnerQ4)
	}
	ev.RememberedPath("fp0", "op_1")
	snap, err := ev.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	back := &Evidence{MaxExchanges: 10}
	back.RememberExchange("stale", "op", "p")
	if err := back.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if back.Verdict("op_1", keyPartnerQ4, gates) != Pass || back.Verdict("op_2", keySmall, gates[:1]) != Fail {
		t.Error("verdicts lost in the round trip")
	}
	if _, ok := back.RememberedPath("stale", "op"); ok {
		t.Error("restore merged instead of replacing")
	}
	// The restored recency order is the original's: evicting two drops
	// fp1 and fp2, not fp0, which was used last.
	back.MaxExchanges = 4
	back.RememberExchange("fp9", "op_1", keySmall)
	for fp, want := range map[string]bool{"fp0": true, "fp1": false, "fp2": false, "fp3": true} {
		if _, ok := back.RememberedPath(fp, "op_1"); ok != want {
			t.Errorf("%s remembered %v, want %v", fp, ok, want)
		}
	}
	again, _ := ev.Snapshot()
	if !bytes.Equal(snap, again) {
		t.Error("snapshot not deterministic")
	}

	for _, bad := range []string{
		`not json`,
		`{"version":2,"scores":[],"exchanges":[]}`,
		`{"version":1,"scores":[{"operation_id":"o","path":"p","evaluator_id":"e","n":1,"mean":1,"m2":0,"passes":2}]}`,
		`{"version":1,"scores":[{"operation_id":"o","path":"p","evaluator_id":"e","n":-1,"mean":1,"m2":0,"passes":0}]}`,
	} {
		if err := back.Restore([]byte(bad)); err == nil {
			t.Errorf("restore accepted %s", bad)
		}
	}
	if back.Verdict("op_1", keyPartnerQ4, gates) != Pass {
		t.Error("a failed restore changed the evidence")
	}
}

func TestEvidenceConcurrent(t *testing.T) {
	ev := &Evidence{MaxExchanges: 50}
	gates := []Gate{{EvaluatorID: "e", MinScore: 0.5}}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fp := fmt.Sprint("fp", w, i%70)
				ev.Add("op", "p", "e", 0.9, true)
				ev.Verdict("op", "p", gates)
				ev.RememberExchange(fp, "op", "p")
				ev.RememberedPath(fp, "op")
				if i%100 == 0 {
					if snap, err := ev.Snapshot(); err != nil {
						t.Error(err)
					} else if err := ev.Restore(snap); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if ev.Verdict("op", "p", gates) != Pass {
		t.Error("concurrent evidence lost")
	}
}
