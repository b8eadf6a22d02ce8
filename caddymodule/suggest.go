package caddymodule

import (
	"slices"
	"strings"
)

// closestModelIDs returns up to n of ids, nearest to id first: by
// edit distance to the whole id or to its model part (so "gpt-4o-mini"
// finds "openai/gpt-4o-mini"), case-insensitively, declaration order
// breaking ties. Ids further away than the longer of the two strings are
// never suggested.
func closestModelIDs(id string, ids []string, n int) []string {
	type scored struct {
		id   string
		dist int
		rank int
	}
	want := strings.ToLower(id)
	_, wantName, hasProvider := strings.Cut(want, "/")
	var all []scored
	for i, known := range ids {
		cand := strings.ToLower(known)
		d := editDistance(want, cand)
		_, name, ok := strings.Cut(cand, "/")
		if ok {
			d = min(d, editDistance(want, name)+1)
			if hasProvider {
				d = min(d, editDistance(wantName, name)+1)
			}
		}
		if d >= max(len(want), len(cand)) {
			continue
		}
		all = append(all, scored{known, d, i})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	out := make([]string, 0, n)
	for _, s := range all {
		if len(out) == n {
			break
		}
		out = append(out, s.id)
	}
	return out
}

// maxEditInput bounds the strings editDistance compares, so that a huge
// model id in a request costs little.
const maxEditInput = 128

// editDistance is the Levenshtein distance between a and b (bytes), each
// cut to maxEditInput bytes.
func editDistance(a, b string) int {
	a, b = a[:min(len(a), maxEditInput)], b[:min(len(b), maxEditInput)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// suggestModels names up to three ids of the catalog, or of configured
// models that are switched off (marked so), closest to an unknown id.
func (a *App) suggestModels(id string) []string {
	models := a.catalog.Models()
	ids := make([]string, 0, len(models)+len(a.offModels))
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	off := make([]string, 0, len(a.offModels))
	for known := range a.offModels {
		off = append(off, known)
	}
	slices.Sort(off)
	ids = append(ids, off...)
	near := closestModelIDs(id, ids, 3)
	for i, known := range near {
		if _, ok := a.offModels[known]; ok {
			near[i] = known + " (switched off)"
		}
	}
	return near
}
