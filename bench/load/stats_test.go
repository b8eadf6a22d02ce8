package main

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	// 1..100 ms: the p-th percentile by nearest rank is exactly p ms.
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := summarize(d)
	cases := []struct {
		p    float64
		want time.Duration
	}{
		{0, 1 * time.Millisecond},
		{1, 1 * time.Millisecond},
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{99.5, 100 * time.Millisecond},
		{100, 100 * time.Millisecond},
	}
	for _, c := range cases {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if s.Count != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Errorf("summary = %+v", s)
	}
	if want := 50500 * time.Microsecond; s.Mean != want {
		t.Errorf("mean = %v, want %v", s.Mean, want)
	}
}

func TestPercentileSmallSamples(t *testing.T) {
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("empty sample: %v", got)
	}
	one := []time.Duration{7}
	for _, p := range []float64{1, 50, 99, 100} {
		if got := percentile(one, p); got != 7 {
			t.Errorf("one sample, p%v = %v", p, got)
		}
	}
	// With three samples the median is the middle one and p99 the largest.
	three := []time.Duration{1, 2, 3}
	if got := percentile(three, 50); got != 2 {
		t.Errorf("p50 of three = %v", got)
	}
	if got := percentile(three, 99); got != 3 {
		t.Errorf("p99 of three = %v", got)
	}
	if (summarize(nil) != summary{}) {
		t.Error("summary of an empty sample is not zero")
	}
}
