package main

import (
	"fmt"
	"strconv"
	"strings"
)

// simKey is the gateway key of the simulation's org. It is a fixed test
// value: the gateway runs on a fresh store in a temp dir, on loopback only.
const simKey = "mg_live_sim00000000000000000000000"

// Names the simulation gives the gateway.
const (
	routerModel  = "router-1"
	operationKey = "sim_op"
	provider     = "demo"
)

// gateMinScore is the operation's ship gate: the share of answers the
// "correct" evaluator must accept. It is also the pass rate the target asks
// the routed traffic to keep.
const gateMinScore = 0.85

// explore is the router's configured share of gated traffic that tries the
// next cheaper unproven path.
const explore = 0.1

// simModel is one model of the catalog the simulation configures.
type simModel struct {
	// name is the model's upstream name; "demo/"+name is its gateway id.
	name string
	// priceIn and priceOut are USD per 1M input and output tokens.
	priceIn, priceOut float64
	// quality is the percent of prompts the demo upstream answers
	// correctly; it is the -q grade in name, or 100 without one.
	quality int
	// reference marks the model router-1 would otherwise be pinned to.
	reference bool
}

// id is the model's id on the gateway.
func (m simModel) id() string { return provider + "/" + m.name }

// passesGate reports whether the model's answers meet the ship gate on
// average: whether routing to it keeps the operation within its gate.
func (m simModel) passesGate() bool { return float64(m.quality) >= gateMinScore*100 }

// cost is what tokens cost at the model's direct price.
func (m simModel) cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*m.priceIn + float64(completionTokens)*m.priceOut) / 1e6
}

// catalog is the reference first, then router-1's pool from the dearest to
// the cheapest: a strong mid-price model, a cheap one that still passes the
// gate, and a very cheap one that does not.
var catalog = []simModel{
	{name: "demo-ref", priceIn: 10, priceOut: 30, quality: 100, reference: true},
	{name: "demo-mid-q97", priceIn: 3, priceOut: 9, quality: 97},
	{name: "demo-cheap-q90", priceIn: 1, priceOut: 3, quality: 90},
	{name: "demo-bad-q50", priceIn: 0.2, priceOut: 0.6, quality: 50},
}

// referenceModel returns the catalog's reference model.
func referenceModel(models []simModel) simModel {
	for _, m := range models {
		if m.reference {
			return m
		}
	}
	return models[0]
}

// cheapestPassing returns the cheapest model (by output price, then input
// price) that passes the gate without being the reference, and false when
// there is none.
func cheapestPassing(models []simModel) (simModel, bool) {
	var best simModel
	found := false
	for _, m := range models {
		if m.reference || !m.passesGate() {
			continue
		}
		if !found || m.priceOut < best.priceOut || (m.priceOut == best.priceOut && m.priceIn < best.priceIn) {
			best, found = m, true
		}
	}
	return best, found
}

// simCaddyfile is the configuration the simulation loads: the gateway on
// gwPort with one paid org, the demo provider, the catalog and router-1
// over it, and the demo upstream on upPort, all on loopback.
func simCaddyfile(store string, gwPort, upPort int, models []simModel) string {
	var b strings.Builder
	b.WriteString("{\n\tadmin off\n\tpersist_config off\n\tlog {\n\t\toutput discard\n\t}\n\tllm {\n")
	fmt.Fprintf(&b, "\t\tstore %s\n", store)
	fmt.Fprintf(&b, "\t\torg sim {\n\t\t\tplan paid\n\t\t\tkey %s\n\t\t}\n", simKey)
	fmt.Fprintf(&b, "\t\tprovider %s {\n\t\t\tdialect openai\n\t\t\tbase_url http://127.0.0.1:%d/v1\n\t\t}\n", provider, upPort)
	var pool []string
	for _, m := range models {
		fmt.Fprintf(&b, "\t\tmodel %s {\n\t\t\tprice %s %s\n\t\t}\n", m.id(), price(m.priceIn), price(m.priceOut))
		if !m.reference {
			pool = append(pool, m.id())
		}
	}
	fmt.Fprintf(&b, "\t\trouter %s {\n\t\t\treference %s\n\t\t\tpool %s\n\t\t\texplore %s\n\t\t}\n",
		routerModel, referenceModel(models).id(), strings.Join(pool, " "), price(explore))
	b.WriteString("\t}\n}\n")
	// Both sites bind to loopback: a site address alone names the host
	// the site answers for, not the interface it listens on.
	fmt.Fprintf(&b, "http://127.0.0.1:%d {\n\tbind 127.0.0.1\n\troute /v1/* {\n\t\tllm_gateway\n\t\tllm_reliability\n\t}\n}\n", gwPort)
	fmt.Fprintf(&b, "http://127.0.0.1:%d {\n\tbind 127.0.0.1\n\tllm_demo_upstream\n}\n", upPort)
	return b.String()
}

// price formats a number as the Caddyfile writes it: no exponent, no
// trailing zeros.
func price(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
