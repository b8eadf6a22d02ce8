package main

import (
	"math"
	"slices"
	"time"
)

// summary is the latency distribution of one target in one workload.
type summary struct {
	Count int
	Mean  time.Duration
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// summarize sorts d in place and describes it. An empty sample gives the
// zero summary, which the report prints as "-" rather than as a fast result.
func summarize(d []time.Duration) summary {
	if len(d) == 0 {
		return summary{}
	}
	slices.Sort(d)
	var total time.Duration
	for _, v := range d {
		total += v
	}
	return summary{
		Count: len(d),
		Mean:  total / time.Duration(len(d)),
		P50:   percentile(d, 50),
		P99:   percentile(d, 99),
		Max:   d[len(d)-1],
	}
}

// percentile returns the p-th percentile (0 < p <= 100) of the sorted sample
// by the nearest-rank method: the smallest value that at least p percent of
// the sample is less than or equal to. Nearest rank is used instead of
// interpolation so that every reported latency is one a request really had;
// with a few thousand samples the two differ by less than the clock noise.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}
