package caddymodule

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// cacheHeader is the request header that opts a call into the response
// cache ("use") or out of it ("bypass"), and the response header that
// says whether the answer came from it ("hit") or not ("miss").
const cacheHeader = "X-Gateway-Cache"

// cacheMeta is kept with a cached body: what the delivery block and the
// record of a hit need.
type cacheMeta struct {
	Provider     string `json:"provider"`
	ServedBy     string `json:"served_by"`
	Quantization string `json:"quantization"`
	PathKey      string `json:"path_key"`
	InputTokens  int    `json:"in"`
	OutputTokens int    `json:"out"`
	Exchange     string `json:"exchange,omitempty"`
	Version      string `json:"version"`
}

// cacheable reports whether the call may be answered from, and stored in,
// the response cache: whole (not streamed) answers, opted in by the org or
// the request.
func (c *call) cacheable(r *http.Request) bool {
	if c.req.Stream || c.route.Tier == "batch" {
		return false
	}
	switch r.Header.Get(cacheHeader) {
	case "use":
		return true
	case "bypass":
		return false
	}
	oc := c.g.app.orgConfig[c.p.orgName]
	return oc != nil && oc.Cache
}

// cacheKey is the key of the call's answer in the response cache. It is
// scoped to the org and to the models its keys may use, so no tenant is
// ever answered from another's entry (or can learn that another sent a
// prompt), and it covers the whole request body in canonical form, every
// member known to the gateway or not, since all of them reach the upstream
// and may shape the answer, except prompt-cache hints (cache_control),
// which change the price and not the answer. The endpoint and the
// effective tier count too:
// an entry is an answer in one endpoint's shape. fp_c_ (the delivery's
// cache fingerprint) stays the SPEC's shape-independent key; this one
// only ever says more.
func (c *call) cacheKey() string {
	if c.cacheKeyMemo != "" {
		return c.cacheKeyMemo
	}
	h := sha256.New()
	b := make([]byte, 0, 256+len(c.body))
	b = append(b, "org\x00"...)
	b = append(b, c.p.orgID...)
	b = append(b, "\x00models\x00"...)
	if c.p.allowed != nil {
		models := make([]string, 0, len(c.p.allowed))
		for m := range c.p.allowed {
			models = append(models, m)
		}
		slices.Sort(models)
		for _, m := range models {
			b = append(append(b, m...), '\n')
		}
	} else {
		b = append(b, '*')
	}
	b = append(b, "\x00endpoint\x00"...)
	b = append(b, endpointNames[c.d]...)
	b = append(b, "\x00tier\x00"...)
	b = append(b, c.route.Tier...)
	b = strconv.AppendBool(append(b, "\x00strict\x00"...), c.req.TierStrict)
	b = append(b, "\x00body\x00"...)
	b = translate.AppendCanonicalWithoutHints(b, gjson.ParseBytes(c.body))
	h.Write(b)
	c.cacheKeyMemo = "rc_" + hex.EncodeToString(h.Sum(nil))
	return c.cacheKeyMemo
}

// serveCached answers from the cache when it holds the call's cache key;
// a hit makes no upstream call and is billed 0.
func (c *call) serveCached(w http.ResponseWriter, r *http.Request) bool {
	sh := c.g.app.rt.shared
	entry, ok := sh.cache.Get(c.cacheKey(), time.Now())
	observeCacheLookup(c.req.Model, ok)
	if !ok {
		w.Header().Set(cacheHeader, "miss")
		return false
	}
	i := bytes.IndexByte(entry, '\n')
	var meta cacheMeta
	if i < 0 || json.Unmarshal(entry[:i], &meta) != nil {
		return false
	}
	body := entry[i+1:]
	zero := 0.0
	dl := &delivery{
		tier: c.route.Tier, servedBy: meta.ServedBy, provider: meta.Provider, quantization: meta.Quantization,
		upgraded: c.route.Upgraded, cost: &zero, upstreamCost: &zero,
		latencyMs: time.Since(c.start).Milliseconds(), gates: c.gates, scheduled: c.gates > 0, fps: c.fps,
	}
	if meta.Exchange != "" {
		ex := meta.Exchange
		dl.fps.Exchange = &ex
	}
	out := translate.FinishResponse(c.d, append([]byte(nil), body...), c.id, c.req.Model, dl.json())
	usage := translate.Usage{InputTokens: meta.InputTokens, OutputTokens: meta.OutputTokens, Known: true}
	rec := c.successRecord(routing.Candidate{}, usage, dl, out, meta.Version)
	rec.Provider, rec.PathKey, rec.Cache = meta.Provider, meta.PathKey, "hit"
	c.record(rec)
	w.Header().Set(cacheHeader, "hit")
	writeJSON(w, http.StatusOK, out)
	return true
}

// storeCached keeps a served answer (in the client's shape, before the id
// and delivery are set) under the call's cache key. Errors never get here.
func (c *call) storeCached(cand routing.Candidate, usage translate.Usage, dl *delivery, body []byte, version string) {
	meta := cacheMeta{
		Provider: cand.Provider.Name, ServedBy: cand.Path.ServedBy, Quantization: cand.Path.Quantization,
		PathKey: routing.PathKey(cand), InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, Version: version,
	}
	if dl.fps.Exchange != nil {
		meta.Exchange = *dl.fps.Exchange
	}
	head, err := json.Marshal(meta)
	if err != nil {
		return
	}
	entry := make([]byte, 0, len(head)+1+len(body))
	entry = append(append(append(entry, head...), '\n'), body...)
	c.g.app.rt.shared.cache.Put(c.cacheKey(), entry, time.Now())
}
