package caddymodule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// modelCaller makes model calls for the reliability layer (llm_judge and
// embedding_match evaluators, evaluations with a model_version) through the
// gateway's own call path: the same validation, routing, fallback, delivery,
// recording and billing as a client's call, for the org that asked.
type modelCaller struct {
	app *App
	// gateway is the handler whose upstreams serve internal calls; set when
	// a gateway handler is provisioned with this app.
	gateway atomic.Pointer[Gateway]
}

// internalServer stands in for the HTTP server in an internal call's
// context; the reverse proxy reads only its log settings.
var internalServer = new(caddyhttp.Server)

// call runs one request through the call path and returns status and body.
func (m *modelCaller) call(ctx context.Context, orgID string, d translate.Dialect, body []byte) (int, []byte, error) {
	g := m.gateway.Load()
	if g == nil {
		return 0, nil, errors.New("no llm_gateway handler is configured to serve internal model calls")
	}
	st := m.app.storeOrNil()
	if st == nil {
		return 0, nil, errNotStarted
	}
	org, err := st.Org(orgID)
	if err != nil {
		return 0, nil, fmt.Errorf("org %s: %w", orgID, err)
	}
	p := m.app.principalFor(org, "internal")
	r, err := internalRequest(ctx, g.Prefix+d.Path(), body)
	if err != nil {
		return 0, nil, err
	}
	w := &bufferWriter{header: make(http.Header)}
	c, aerr := g.newCall(r, p, d, body, time.Now())
	if aerr != nil {
		return aerr.status, aerr.appendBody(nil, false), nil
	}
	defer c.reservation.Release()
	c.serve(w, r)
	return w.status, w.body.Bytes(), nil
}

// Chat sends prompt as a user message to model and returns the reply text.
func (m *modelCaller) Chat(ctx context.Context, orgID, model, prompt string) (string, error) {
	body := []byte(`{"model":`)
	body = translate.AppendJSONString(body, model)
	body = append(body, `,"messages":[{"role":"user","content":`...)
	body = translate.AppendJSONString(body, prompt)
	body = append(body, "}]}"...)
	status, out, err := m.call(ctx, orgID, translate.Chat, body)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("model %s answered %d: %s", model, status, gjson.GetBytes(out, "error.message").String())
	}
	return gjson.GetBytes(out, "choices.0.message.content").String(), nil
}

// Embed returns one embedding per input from model.
func (m *modelCaller) Embed(ctx context.Context, orgID, model string, inputs []string) ([][]float64, error) {
	body := []byte(`{"model":`)
	body = translate.AppendJSONString(body, model)
	body = append(body, `,"input":[`...)
	for i, in := range inputs {
		if i > 0 {
			body = append(body, ',')
		}
		body = translate.AppendJSONString(body, in)
	}
	body = append(body, "]}"...)
	status, out, err := m.call(ctx, orgID, translate.Embeddings, body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("model %s answered %d: %s", model, status, gjson.GetBytes(out, "error.message").String())
	}
	vecs := make([][]float64, len(inputs))
	var bad error
	gjson.GetBytes(out, "data").ForEach(func(_, item gjson.Result) bool {
		i := int(item.Get("index").Int())
		if i < 0 || i >= len(vecs) {
			bad = fmt.Errorf("embedding index %d out of range", i)
			return false
		}
		emb := item.Get("embedding")
		if !emb.IsArray() {
			bad = errors.New("embedding is not an array of numbers")
			return false
		}
		emb.ForEach(func(_, v gjson.Result) bool {
			vecs[i] = append(vecs[i], v.Float())
			return true
		})
		return true
	})
	if bad != nil {
		return nil, bad
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("no embedding for input %d", i)
		}
	}
	return vecs, nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// bufferWriter collects an internal call's answer.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

// Flush is a no-op: the answer is read whole.
func (w *bufferWriter) Flush() {}
