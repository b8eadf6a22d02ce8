package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// requestTimeout bounds every request the simulation sends, so that a stuck
// gateway ends the run instead of hanging it.
const requestTimeout = 30 * time.Second

// maxBody bounds what the simulation reads of a response.
const maxBody = 8 << 20

// api talks to the gateway's HTTP API with the simulation's key.
type api struct {
	base   string
	key    string
	client *http.Client
}

func newAPI(base, key string, concurrency int) *api {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency + 2
	return &api{base: base, key: key, client: &http.Client{Transport: tr, Timeout: requestTimeout}}
}

// do sends a request with the key and returns the status and body.
func (a *api) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the body: %w", err)
	}
	return resp.StatusCode, out, nil
}

// create POSTs v as JSON and returns the new object's id, expecting 201.
func (a *api) create(ctx context.Context, path string, v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	status, out, err := a.do(ctx, http.MethodPost, path, raw)
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", path, err)
	}
	id := gjson.GetBytes(out, "id").String()
	if status != http.StatusCreated || id == "" {
		return "", fmt.Errorf("POST %s: status %d: %s", path, status, snippet(out))
	}
	return id, nil
}

// setUp creates the evaluator that accepts correct answers and the
// operation whose ship gate asks for gateMinScore of them. On a gateway
// that has the operation from an earlier run, it keeps it, and with it the
// evidence the gateway gathered.
func (a *api) setUp(ctx context.Context) error {
	found, err := a.hasOperation(ctx, operationKey)
	if err != nil || found {
		return err
	}
	evID, err := a.create(ctx, "/evaluators", map[string]any{
		"name": "correct", "kind": "regex", "config": map[string]any{"pattern": "^Echo: "},
	})
	if err != nil {
		return err
	}
	_, err = a.create(ctx, "/operations", map[string]any{
		"key": operationKey, "name": "Sim",
		"ship_gates": []any{map[string]any{"evaluator_id": evID, "min_score": gateMinScore}},
	})
	return err
}

// hasOperation reports whether the org has an operation with the key.
func (a *api) hasOperation(ctx context.Context, key string) (bool, error) {
	cursor := ""
	for page := 0; page < maxListPages; page++ {
		q := url.Values{"limit": {"200"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, out, err := a.do(ctx, http.MethodGet, "/operations?"+q.Encode(), nil)
		if err != nil {
			return false, fmt.Errorf("GET /operations: %w", err)
		}
		if status != http.StatusOK {
			return false, fmt.Errorf("GET /operations: status %d: %s", status, snippet(out))
		}
		body := gjson.ParseBytes(out)
		for _, op := range body.Get("data").Array() {
			if op.Get("key").String() == key {
				return true, nil
			}
		}
		cursor = body.Get("next_cursor").String()
		if !body.Get("has_more").Bool() || cursor == "" {
			return false, nil
		}
	}
	return false, fmt.Errorf("GET /operations: more than %d pages", maxListPages)
}

// checkCatalog makes sure the gateway serves router-1 over the models the
// report prices: the report would be wrong about any other catalog.
func (a *api) checkCatalog(ctx context.Context, models []simModel) error {
	status, out, err := a.do(ctx, http.MethodGet, "/models", nil)
	if err != nil {
		return fmt.Errorf("GET /models: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET /models: status %d: %s", status, snippet(out))
	}
	listed := map[string]bool{}
	for _, m := range gjson.GetBytes(out, "data.#.id").Array() {
		listed[m.String()] = true
	}
	want := []string{routerModel}
	for _, m := range models {
		want = append(want, m.id())
	}
	for _, id := range want {
		if !listed[id] {
			return fmt.Errorf("the gateway at %s does not list %s: -gateway expects the catalog of Caddyfile.example (router-1 over %s)",
				a.base, id, strings.Join(want[1:], ", "))
		}
	}
	return nil
}

// callRecord is what the simulation reads of a recorded call.
type callRecord struct {
	modelVersion string
	pathKey      string
	// upstreamCost is what the served model's price makes the call cost
	// the gateway; nil when the record has none.
	upstreamCost *float64
}

// maxListPages bounds the paging through the call list beyond what n
// calls need, in case the list keeps reporting more.
const maxListPages = 20

// listCalls pages through the operation's recorded calls and returns them
// by call id; want is how many there should be, which bounds the paging.
func (a *api) listCalls(ctx context.Context, want int) (map[string]callRecord, error) {
	const limit = 200
	recs := make(map[string]callRecord, want)
	cursor := ""
	for page := 0; page < want/limit+maxListPages; page++ {
		q := url.Values{"operation_id": {operationKey}, "limit": {fmt.Sprint(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, out, err := a.do(ctx, http.MethodGet, "/calls?"+q.Encode(), nil)
		if err != nil {
			return recs, fmt.Errorf("GET /calls: %w", err)
		}
		if status != http.StatusOK {
			return recs, fmt.Errorf("GET /calls: status %d: %s", status, snippet(out))
		}
		body := gjson.ParseBytes(out)
		body.Get("data").ForEach(func(_, c gjson.Result) bool {
			rec := callRecord{
				modelVersion: c.Get("model_version").String(),
				pathKey:      c.Get("path_key").String(),
			}
			if u := c.Get("upstream_cost_usd"); u.Type == gjson.Number {
				v := u.Float()
				rec.upstreamCost = &v
			}
			recs[c.Get("id").String()] = rec
			return true
		})
		cursor = body.Get("next_cursor").String()
		if !body.Get("has_more").Bool() || cursor == "" {
			return recs, nil
		}
	}
	return recs, fmt.Errorf("GET /calls: more than %d pages", want/limit+maxListPages)
}

// snippet shortens a body for an error message.
func snippet(b []byte) string {
	const max = 300
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
