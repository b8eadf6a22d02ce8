package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// TokenCountHeader says where the answer of POST /messages/count_tokens
// came from: "upstream" when an Anthropic-dialect upstream counted the
// tokens, "estimate" when the gateway estimated them.
const TokenCountHeader = "X-Gateway-Token-Count"

// imageTokenEstimate is what an image counts for in an estimate: about
// what Anthropic charges for a picture of a megapixel or so.
const imageTokenEstimate = 1600

// serveCountTokens answers POST /messages/count_tokens, the token counting
// of the Anthropic API. The request is the messages shape without
// max_tokens. It goes to the model's first Anthropic-dialect path that
// answers; a model with none (or whose every such path fails) gets an
// estimate from the body, marked in TokenCountHeader. Counting is free:
// nothing is billed or recorded.
func (g *Gateway) serveCountTokens(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: "use POST"}, true)
		return
	}
	p, aerr := g.app.principalOf(r)
	if aerr != nil {
		writeError(w, aerr, true)
		return
	}
	if aerr := g.app.checkRateLimit(w, p); aerr != nil {
		writeError(w, aerr, true)
		return
	}
	body, aerr := readBody(w, r, g.app.MaxBodyBytes)
	if aerr != nil {
		writeError(w, aerr, true)
		return
	}
	model, aerr := parseCountTokens(body)
	if aerr != nil {
		writeError(w, aerr, true)
		return
	}
	if !p.mayUse(model) {
		writeError(w, errForbidden(fmt.Sprintf("this key has no access to model %q", model)), true)
		return
	}
	m, aerr := g.countingModel(model)
	if aerr != nil {
		writeError(w, aerr, true)
		return
	}
	for i := range m.Paths {
		path := &m.Paths[i]
		prov, ok := g.app.catalog.Provider(path.Provider)
		up := g.upstreams[path.Provider]
		if !ok || up == nil || prov.Dialect != routing.DialectAnthropic {
			continue
		}
		ubody, err := translate.PrepareRequest(translate.Messages, translate.Messages, body, path.UpstreamModel, false)
		if err != nil {
			continue
		}
		aw := newAttemptWriter(w, false, nil)
		err = up.sendPath(aw, r, "/messages/count_tokens", ubody)
		if err != nil || aw.mode == modeCapture {
			// Unreachable, failing, or without the endpoint: try the
			// next path, else estimate.
			continue
		}
		if aw.status >= 400 {
			// The upstream refused the request itself.
			writeError(w, upstreamError(aw.buf.Bytes(), aw.status), true)
			return
		}
		if n := gjson.GetBytes(aw.buf.Bytes(), "input_tokens"); n.Type == gjson.Number {
			w.Header().Set(TokenCountHeader, "upstream")
			writeJSON(w, http.StatusOK, appendTokenCount(nil, n.Int()))
			return
		}
	}
	w.Header().Set(TokenCountHeader, "estimate")
	writeJSON(w, http.StatusOK, appendTokenCount(nil, estimateInputTokens(body)))
}

// parseCountTokens validates a count_tokens body, the messages shape
// without max_tokens, and returns its model.
func parseCountTokens(body []byte) (string, *apiError) {
	check := body
	if gjson.ValidBytes(body) && gjson.ParseBytes(body).IsObject() && !gjson.GetBytes(body, "max_tokens").Exists() {
		// The messages rules ask for max_tokens, which counting has none of.
		var err error
		if check, err = sjson.SetBytes(body, "max_tokens", 1); err != nil {
			return "", errInvalid("", "the request body is not a JSON object")
		}
	}
	req, verr := translate.ParseMessages(check)
	if verr != nil {
		return "", errValidation(verr)
	}
	return req.Model, nil
}

// countingModel is the model whose paths count a call's tokens: the model
// itself, or the reference a router stands in for.
func (g *Gateway) countingModel(id string) (*routing.Model, *apiError) {
	if rt, ok := g.app.catalog.Router(id); ok {
		if rt.Entry.Embedding {
			return nil, errInvalid("model", fmt.Sprintf("model %q is an embeddings model", id))
		}
		return rt.Reference, nil
	}
	m, err := g.app.catalog.Model(id)
	if err != nil {
		return nil, g.app.routeError(err, id)
	}
	if m.Embedding {
		return nil, errInvalid("model", fmt.Sprintf("model %q is an embeddings model", id))
	}
	return m, nil
}

func appendTokenCount(b []byte, n int64) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, n)
	return append(b, '}')
}

// estimateInputTokens estimates the input tokens of a messages-shape body
// at about four bytes a token, as the gateway counts relayed text: the
// system prompt, every text, tool call and tool result of the messages,
// and the tools' names, descriptions and schemas; an image counts
// imageTokenEstimate.
func estimateInputTokens(body []byte) int64 {
	var bytes, images int64
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			bytes += int64(len(v.Str))
		case v.IsArray():
			v.ForEach(func(_, b gjson.Result) bool {
				switch b.Get("type").String() {
				case "image", "document":
					images++
				case "tool_use":
					bytes += int64(len(b.Get("name").Str) + len(b.Get("input").Raw))
				case "tool_result":
					walk(b.Get("content"))
				default:
					if b.Type == gjson.String {
						bytes += int64(len(b.Str))
					} else {
						bytes += int64(len(b.Get("text").Str))
					}
				}
				return true
			})
		}
	}
	root := gjson.ParseBytes(body)
	walk(root.Get("system"))
	root.Get("messages").ForEach(func(_, m gjson.Result) bool {
		walk(m.Get("content"))
		return true
	})
	root.Get("tools").ForEach(func(_, t gjson.Result) bool {
		bytes += int64(len(t.Get("name").Str) + len(t.Get("description").Str) + len(t.Get("input_schema").Raw))
		return true
	})
	return (bytes+3)/4 + images*imageTokenEstimate
}
