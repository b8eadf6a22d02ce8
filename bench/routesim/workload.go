package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// vocabulary is what the random words of the prompts are drawn from.
var vocabulary = strings.Fields(`apple river stone cloud paper window garden music silver engine
	forest candle bridge winter orange planet mirror pencil ocean ladder castle meadow rocket
	violet harbor tunnel basket falcon copper lantern desert marble summer thunder velvet
	island anchor blossom canyon glacier honey jungle kettle lemon magnet nickel orchard pepper
	quartz saddle timber umbrella walnut yellow zephyr`)

// prompts returns n distinct prompts, "question <i> <random words>", the
// same for the same seed. The index makes each prompt new to the gateway,
// so no answer comes from its cache or from an earlier exchange, and every
// call says something about the path that served it.
func prompts(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]string, n)
	for i := range out {
		words := make([]string, 3+rng.IntN(4))
		for k := range words {
			words[k] = vocabulary[rng.IntN(len(vocabulary))]
		}
		out[i] = fmt.Sprintf("question %d %s", i+1, strings.Join(words, " "))
	}
	return out
}

// result is what one call's response said.
type result struct {
	// id is the completion id, which is also the call record's id.
	id     string
	status int
	// err says why the call failed; empty on a 200.
	err string
	// correct is true when the answer starts with "Echo: ".
	correct bool
	// cost is delivery.cost_usd; nil when absent or null.
	cost     *float64
	provider string
	tier     string
	upgraded bool
	// scheduled is delivery.evals.scheduled: whether the eval pass will
	// score the call.
	scheduled        bool
	promptTokens     int
	completionTokens int
	// served is the upstream model that served the call, and upstreamCost
	// what it cost the gateway at that model's price, from its record.
	served       string
	upstreamCost *float64
	// at is when the answer (or the failure) arrived, from the first call
	// sent. The eval pass learns in wall-clock time, so the report shows
	// when each window ended as well as how many calls it held.
	at time.Duration
}

// ok reports whether the gateway answered the call.
func (r *result) ok() bool { return r.status == http.StatusOK && r.err == "" }

// chatBody is the request of one simulated call.
func chatBody(prompt string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model":    routerModel,
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
		"metadata": map[string]any{"operation_id": operationKey},
	})
	return b
}

// sendAll sends one call per prompt with concurrency workers and returns
// the results in prompt order. Prompts are handed out in order, so the
// index of a result is its place in time, give or take the workers in
// flight. It stops handing out prompts when ctx ends.
func sendAll(ctx context.Context, a *api, ps []string, concurrency int, progress func(done int)) []result {
	results := make([]result, len(ps))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = chat(ctx, a, ps[i])
				results[i].at = time.Since(start)
				mu.Lock()
				done++
				d := done
				mu.Unlock()
				progress(d)
			}
		}()
	}
feed:
	for i := range ps {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return results
}

// chat sends one call and reads what the simulation needs of its answer.
func chat(ctx context.Context, a *api, prompt string) result {
	status, out, err := a.do(ctx, http.MethodPost, "/chat/completions", chatBody(prompt))
	r := result{status: status}
	if err != nil {
		r.err = err.Error()
		return r
	}
	body := gjson.ParseBytes(out)
	if status != http.StatusOK {
		r.err = fmt.Sprintf("status %d: %s", status, body.Get("error.message").String())
		if code := body.Get("error.code").String(); code != "" {
			r.err = fmt.Sprintf("status %d %s: %s", status, code, body.Get("error.message").String())
		}
		return r
	}
	r.id = body.Get("id").String()
	r.correct = strings.HasPrefix(body.Get("choices.0.message.content").String(), "Echo: ")
	d := body.Get("delivery")
	if c := d.Get("cost_usd"); c.Type == gjson.Number {
		v := c.Float()
		r.cost = &v
	}
	r.provider = d.Get("provider").String()
	r.tier = d.Get("tier").String()
	r.upgraded = d.Get("upgraded").Bool()
	r.scheduled = d.Get("evals.scheduled").Bool()
	r.promptTokens = int(body.Get("usage.prompt_tokens").Int())
	r.completionTokens = int(body.Get("usage.completion_tokens").Int())
	if !d.Exists() {
		r.err = "200 without a delivery block"
	}
	return r
}

// recordWait bounds the wait for the gateway to commit the last call
// records; it commits in batches within milliseconds, so this is slack.
const recordWait = 20 * time.Second

// attachServed fills in each result's served model from the call records,
// waiting for the records of the last calls to be committed. It returns
// how many answered calls have no record.
func attachServed(ctx context.Context, a *api, results []result) (int, error) {
	want := 0
	for i := range results {
		if results[i].ok() {
			want++
		}
	}
	deadline := time.Now().Add(recordWait)
	var recs map[string]callRecord
	for {
		var err error
		recs, err = a.listCalls(ctx, want)
		if err != nil {
			return want, err
		}
		if len(recs) >= want || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	missing := 0
	for i := range results {
		r := &results[i]
		if !r.ok() {
			continue
		}
		rec, found := recs[r.id]
		if !found {
			missing++
			continue
		}
		r.served = servedModel(rec)
		r.upstreamCost = rec.upstreamCost
	}
	return missing, nil
}

// servedModel names the upstream model of a record: its model_version, or
// the model part of its path key (provider/model@quantization).
func servedModel(rec callRecord) string {
	if rec.modelVersion != "" {
		return rec.modelVersion
	}
	key, _, _ := strings.Cut(rec.pathKey, "@")
	if _, model, found := strings.Cut(key, "/"); found {
		return model
	}
	return key
}
