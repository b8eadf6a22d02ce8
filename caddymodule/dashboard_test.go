package caddymodule

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// exportedMetrics maps the name of each metric the gateway exports to its
// label names; a histogram's series names (_bucket, _sum, _count) are
// listed too, _bucket with "le".
func exportedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	descName := regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels := regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
	out := map[string][]string{}
	for _, c := range mx.collectors() {
		_, histogram := c.(*prometheus.HistogramVec)
		if _, ok := c.(prometheus.Histogram); ok {
			histogram = true
		}
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			name := descName.FindStringSubmatch(s)[1]
			var labels []string
			if m := descLabels.FindStringSubmatch(s); m != nil && m[1] != "" {
				labels = strings.Split(m[1], ",")
			}
			out[name] = labels
			if histogram {
				out[name+"_sum"], out[name+"_count"] = labels, labels
				out[name+"_bucket"] = append(slices.Clone(labels), "le")
			}
		}
	}
	return out
}

// TestDashboardQueriesExportedMetrics: every query of the Grafana
// dashboard names metrics the gateway exports, with labels they have.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../packaging/grafana/modelgate.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	metrics := exportedMetrics(t)
	selector := regexp.MustCompile(`\b((?:llm_gateway|gen_ai)_[a-z0-9_]+)(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	grouping := regexp.MustCompile(`by \(([^)]*)\)`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			labels := map[string]bool{}
			// Label names in groupings look like metric names: take them out.
			for _, m := range selector.FindAllStringSubmatch(grouping.ReplaceAllString(tg.Expr, ""), -1) {
				have, ok := metrics[m[1]]
				if !ok {
					t.Errorf("panel %q queries %s, which the gateway does not export", p.Title, m[1])
					continue
				}
				for _, l := range have {
					labels[l] = true
				}
				for _, mm := range matcher.FindAllStringSubmatch(m[2], -1) {
					if !slices.Contains(have, mm[1]) {
						t.Errorf("panel %q matches %s on label %q, which it does not have (%v)", p.Title, m[1], mm[1], have)
					}
				}
			}
			for _, g := range grouping.FindAllStringSubmatch(tg.Expr, -1) {
				for _, l := range strings.Split(g[1], ",") {
					if l = strings.TrimSpace(l); !labels[l] {
						t.Errorf("panel %q groups by %q, which none of its metrics has", p.Title, l)
					}
				}
			}
		}
	}
	if queries < 20 {
		t.Errorf("the dashboard has %d queries; the test lost some", queries)
	}
}
