package caddymodule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
	"github.com/modelgate/gateway/translate"
)

// call is one model call on its way through the gateway.
type call struct {
	g     *Gateway
	p     *principal
	d     translate.Dialect
	body  []byte
	req   translate.Request
	start time.Time
	id    string
	route routing.Route
	// opID is the resolved operation id the call is tagged with.
	opID  *string
	gates int
	// batchRun marks a queued batch call being run: it is served, not
	// queued again.
	batchRun bool
	// unserved is set, on a batch run, when no path could serve the call:
	// nothing is written or recorded, so that the run can be tried again.
	unserved  bool
	lastError string
	fps       routing.Fingerprints
	canon     []byte
	// cacheKeyMemo is cacheKey's result once computed.
	cacheKeyMemo string
	// maxTokens is the request's own output limit, 0 when it sets none.
	maxTokens int64
	// reservation holds the call's worst-case cost against the org's
	// credit until the call is recorded; nil for a free model. Whoever
	// made the call releases it once the call is over.
	reservation *reliability.Reservation

	attempts []reliability.Attempt
	// callObs is what the call's metrics, span and log fields keep.
	callObs
}

// idPrefixes are the completion id prefixes of each client dialect.
var idPrefixes = [...]string{translate.Chat: "chatcmpl-", translate.Messages: "msg_", translate.Responses: "resp_", translate.Embeddings: "emb_"}

// endpointNames name each dialect's endpoint in call records.
var endpointNames = [...]string{translate.Chat: "chat.completions", translate.Messages: "messages", translate.Responses: "responses", translate.Embeddings: "embeddings"}

// newCall validates the request and selects its route. Nothing is sent
// upstream and nothing is recorded for a request that fails here.
func (g *Gateway) newCall(r *http.Request, p *principal, d translate.Dialect, body []byte, start time.Time) (*call, *apiError) {
	c := &call{g: g, p: p, d: d, body: body, start: start}
	var verr *translate.ValidationError
	switch d {
	case translate.Chat:
		c.req, verr = translate.ParseChat(body)
	case translate.Messages:
		c.req, verr = translate.ParseMessages(body)
	case translate.Responses:
		c.req, verr = translate.ParseResponses(body)
	case translate.Embeddings:
		c.req, verr = translate.ParseEmbeddings(body)
	}
	if verr != nil {
		return nil, errValidation(verr)
	}
	if aerr := g.app.limits.checkCounts(d, &c.req); aerr != nil {
		return nil, aerr
	}
	if c.req.Tier == "" {
		c.req.Tier = "standard"
	}
	if !p.mayUse(c.req.Model) {
		return nil, errForbidden(fmt.Sprintf("this key has no access to model %q", c.req.Model))
	}
	st := g.app.storeOrNil()
	if st == nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "api_error", code: "starting", message: errNotStarted.Error()}
	}
	var gating routing.Gating
	if c.req.OperationID != "" {
		op, err := st.ResolveOperation(p.orgID, c.req.OperationID)
		if errors.Is(err, reliability.ErrNotFound) {
			return nil, &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "operation_not_found",
				param: "metadata.operation_id", message: fmt.Sprintf("no operation has the key or id %q", c.req.OperationID)}
		}
		if err != nil {
			return nil, errInternal("could not resolve the operation")
		}
		c.opID = &op.ID
		c.gates = len(op.ShipGates)
		gating.OperationID = op.ID
		for _, sg := range op.ShipGates {
			gating.Gates = append(gating.Gates, routing.Gate{EvaluatorID: sg.EvaluatorID, MinScore: sg.MinScore})
		}
	}
	c.fps, c.canon, c.maxTokens = routing.RequestFacts(d, body, c.req.Tier, c.req.TierStrict)
	gating.PromptFingerprint = c.fps.Prompt

	k := routing.Constraints{
		Dialect: d, Tier: c.req.Tier, TierStrict: c.req.TierStrict,
		ForbidPartner: c.req.ForbidAtlasNetwork, Quantization: c.req.Quantization,
	}
	var route routing.Route
	var err error
	if _, isRouter := g.app.catalog.Router(c.req.Model); isRouter {
		route, err = g.app.catalog.SelectRouted(c.req.Model, k, gating, g.app.rt.shared.evidence, rand.Float64)
	} else {
		route, err = g.app.catalog.Select(c.req.Model, k)
	}
	if err != nil {
		return nil, g.app.routeError(err, c.req.Model)
	}
	var skipped []routing.Candidate
	route, skipped = route.Healthy(g.app.rt.shared.health, time.Now())
	for _, cand := range skipped {
		c.attempts = append(c.attempts, reliability.Attempt{Provider: cand.Provider.Name, UpstreamModel: cand.Path.UpstreamModel,
			Error: "skipped: cooling down after repeated failures"})
	}
	c.route = route
	if aerr := c.checkMaxOutput(); aerr != nil {
		return nil, aerr
	}
	if aerr := g.app.reserveCredit(st, c); aerr != nil {
		return nil, aerr
	}
	c.id = reliability.NewID(idPrefixes[d])
	c.exposePlaceholders(r)
	return c, nil
}

// serve tries the route's paths in order until one answers, and writes the
// answer in the client's shape.
func (c *call) serve(w http.ResponseWriter, r *http.Request) {
	r = c.startSpan(r)
	defer c.endSpan()
	if c.route.Tier == "batch" && !c.batchRun && c.d != translate.Embeddings {
		c.enqueue(w)
		return
	}
	if c.cacheable(r) && c.serveCached(w, r) {
		return
	}
	var lastFail attemptFailure
	var lastErr string
	// untranslatable is the first request member a path's dialect could
	// not take; sent is set once any path was tried upstream.
	var untranslatable *translate.ValidationError
	sent := false
	sh := c.g.app.rt.shared
	for _, cand := range c.route.Candidates {
		up := c.g.upstreams[cand.Provider.Name]
		ud := cand.Provider.UpstreamDialect(c.d)
		ubody, err := translate.PrepareRequest(c.d, ud, c.body, cand.Path.UpstreamModel, c.req.Stream)
		if err != nil {
			c.attempts = append(c.attempts, reliability.Attempt{Provider: cand.Provider.Name, UpstreamModel: cand.Path.UpstreamModel,
				Error: "request translation: " + err.Error()})
			lastErr = err.Error()
			if untranslatable == nil {
				errors.As(err, &untranslatable)
			}
			continue
		}
		sent = true
		var ss *streamState
		if c.req.Stream {
			ss = newStreamState(c, w, cand, ud)
			defer ss.release()
		}
		aw := newAttemptWriter(w, c.req.Stream, ss)
		release, qerr := c.g.app.scheduler.Acquire(r.Context(), cand.Provider.Name, c.route.Tier)
		if qerr != nil {
			c.attempts = append(c.attempts, reliability.Attempt{Provider: cand.Provider.Name, UpstreamModel: cand.Path.UpstreamModel,
				Error: "waiting for the upstream: " + qerr.Error()})
			lastErr = qerr.Error()
			break
		}
		t0 := time.Now()
		ar, span := c.startAttempt(r, cand, up)
		err = up.send(aw, ar, ud, ubody)
		release()
		if aw.mode == modeCapture || (err != nil && aw.status == 0 && !errors.Is(err, errAborted)) {
			sh.health.Failure(routing.PathKey(cand), time.Now())
		} else if aw.status > 0 && aw.status < 500 {
			sh.health.Success(routing.PathKey(cand))
		}
		att := reliability.Attempt{Provider: cand.Provider.Name, UpstreamModel: cand.Path.UpstreamModel,
			Status: aw.status, LatencyMs: time.Since(t0).Milliseconds()}
		c.attemptDone(span, cand, t0, aw, err)

		if aw.mode == modeStream && ss.started {
			// The client has bytes: there is no going back to another path.
			c.attempts = append(c.attempts, att)
			var defect *streamDefect
			switch {
			case errors.As(aw.sinkErr, &defect):
				// The upstream sent what cannot be passed on.
				c.attempts[len(c.attempts)-1].Error = "upstream stream broke: " + defect.Error()
				ss.fail(cand, defect.Error())
			case aw.sinkErr != nil:
				c.record(ss.recordFailed(cand, msgClientClosed))
			case err != nil && !ss.cs.Done():
				c.attempts[len(c.attempts)-1].Error = "upstream stream broke: " + err.Error()
				ss.fail(cand, "the upstream stream broke before it was complete")
			default:
				ss.finish(cand)
			}
			return
		}
		switch {
		case aw.mode == modeCapture:
			att.Error = upstreamMessage(aw.buf.Bytes(), aw.status)
		case err != nil:
			att.Error = attemptErrorText(err)
		case aw.mode == modeStream:
			// A stream that ended before any event: finish it as empty.
			c.attempts = append(c.attempts, att)
			ss.finish(cand)
			return
		case aw.status >= 400:
			// The upstream refused the request itself: another path would too.
			att.Error = upstreamMessage(aw.buf.Bytes(), aw.status)
			c.attempts = append(c.attempts, att)
			e := rejectedError(aw.buf.Bytes(), aw.status, c.d)
			c.record(c.failedRecord(cand, e.message))
			writeError(w, e, c.d == translate.Messages)
			return
		default:
			c.attempts = append(c.attempts, att)
			c.finishBuffered(w, r, cand, up, ud, aw.buf.Bytes())
			return
		}
		c.attempts = append(c.attempts, att)
		lastFail, lastErr = failureOf(aw.status, aw.header, aw.buf.Bytes(), err), att.Error
		if ce := c.g.logger.Check(zap.DebugLevel, "upstream attempt failed, trying the next path"); ce != nil {
			ce.Write(zap.String("provider", cand.Provider.Name), zap.Int("status", aw.status), zap.String("error", att.Error))
		}
	}
	if !sent && untranslatable != nil {
		// No path speaks the client's dialect and the request holds what
		// cannot be said in another: the request is at fault, not an
		// upstream, so no client should retry it.
		e := errValidation(untranslatable)
		e.code = "unsupported_by_model"
		if c.batchRun {
			c.record(c.failedRecord(routing.Candidate{}, e.message))
		} else {
			writeError(w, e, c.d == translate.Messages)
		}
		return
	}
	if c.batchRun {
		c.unserved, c.lastError = true, lastErr
		return
	}
	e := unservedError(lastFail, c.d)
	c.record(c.failedRecord(routing.Candidate{}, e.message))
	writeError(w, e, c.d == translate.Messages)
}

// finishBuffered converts a whole upstream body to the client's shape,
// attaches delivery and answers.
func (c *call) finishBuffered(w http.ResponseWriter, r *http.Request, cand routing.Candidate, up *upstream, ud translate.Dialect, upstreamBody []byte) {
	ans, err := translate.ReadAnswer(ud, c.d, upstreamBody)
	if err != nil {
		c.failUnreadable(w, cand, "the upstream answered with a body the gateway cannot read", err)
		return
	}
	usage, version := ans.Usage(), ans.Model()
	dl := c.newDelivery(cand, usage, ans.Result())
	if c.cacheable(r) {
		// The cache keeps the answer in the client's shape; a hit gives
		// it its own id and delivery.
		if body, err := ans.Finish(c.id, c.req.Model, nil); err == nil {
			c.storeCached(cand, usage, dl, body, version)
		}
	}
	out, err := ans.Finish(c.id, c.req.Model, dl.json())
	if err != nil {
		c.failUnreadable(w, cand, "the upstream's answer cannot be given in this endpoint's shape", err)
		return
	}
	setPlaceholders(r, up, c.req.Model, dl)
	// Recorded before the answer leaves, so it can always be read back.
	c.record(c.successRecord(cand, usage, dl, out, version))
	writeJSON(w, http.StatusOK, out)
}

// failUnreadable answers 502 upstream_invalid_response for an upstream
// answer the gateway cannot pass on, and records the call as failed.
func (c *call) failUnreadable(w http.ResponseWriter, cand routing.Candidate, message string, err error) {
	e := &apiError{status: http.StatusBadGateway, typ: "api_error", code: "upstream_invalid_response", message: message}
	c.record(c.failedRecord(cand, message+": "+err.Error()))
	writeError(w, e, c.d == translate.Messages)
}

// routeError maps a route-selection failure to its API error. An unknown
// model id is a 404 that names the closest ids the catalog has, or, for a
// configured model whose providers are switched off, the environment
// variables that switch them on.
func (a *App) routeError(err error, model string) *apiError {
	var pe *routing.PathError
	switch {
	case errors.Is(err, routing.ErrUnknownModel):
		if why, ok := a.offModels[model]; ok {
			return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "provider_not_configured", param: "model",
				message: why}
		}
		msg := fmt.Sprintf("the model %q does not exist", model)
		if near := a.suggestModels(model); len(near) > 0 {
			msg += "; the closest are " + strings.Join(near, ", ")
		}
		return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
			message: msg + "; GET /models lists every model"}
	case errors.As(err, &pe):
		e := errInvalid(pe.Param, pe.Msg)
		if errors.Is(err, routing.ErrTierUnavailable) {
			e.code = "tier_unavailable"
		}
		return e
	default:
		return errInvalid("model", err.Error())
	}
}

// upstreamMessage is a short account of a failed attempt for the record:
// the upstream's status and its own message, scrubbed of credentials and
// account ids (see rejectedError and unservedError for what the client
// gets).
func upstreamMessage(body []byte, status int) string {
	msg := gjson.GetBytes(body, "error.message").String()
	if msg == "" {
		msg = http.StatusText(status)
	}
	return fmt.Sprintf("status %d: %s", status, cleanMessage(msg))
}

// upstreamError maps an upstream's refusal of the request itself to the
// SPEC body, with a message scrubbed of credentials and account ids (see
// rejectedError).
func upstreamError(body []byte, status int) *apiError {
	return rejectedError(body, status, translate.Chat)
}

// setPlaceholders exposes the call's outcome to access logs as
// {http.llm.provider}, {http.llm.model}, {http.llm.tier} and {http.llm.cost_usd}.
// Values that repeat from call to call are boxed once, not on every call.
func setPlaceholders(r *http.Request, up *upstream, model string, dl *delivery) {
	repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !ok {
		return
	}
	repl.Set("http.llm.provider", up.nameValue)
	repl.Set("http.llm.model", model)
	repl.Set("http.llm.tier", tierValue(dl.tier))
	if dl.cost != nil {
		repl.Set("http.llm.cost_usd", *dl.cost)
	} else {
		repl.Set("http.llm.cost_usd", "")
	}
}

// tierValue is tier as a placeholder value; the known tiers are constants,
// which the compiler boxes without allocating.
func tierValue(tier string) any {
	switch tier {
	case "realtime":
		return "realtime"
	case "standard":
		return "standard"
	case "batch":
		return "batch"
	}
	return tier
}

// checkMaxOutput refuses a request whose own output limit is above the
// maximum output the model declares (of the reference, for a routed call),
// with a 400 naming the limit's member.
func (c *call) checkMaxOutput() *apiError {
	m := c.route.Reference
	if m == nil {
		m = c.route.Model
	}
	if m == nil || m.MaxOutputTokens <= 0 || c.maxTokens <= m.MaxOutputTokens {
		return nil
	}
	param := "max_tokens"
	switch c.d {
	case translate.Chat:
		if gjson.GetBytes(c.body, "max_completion_tokens").Exists() {
			param = "max_completion_tokens"
		}
	case translate.Responses:
		param = "max_output_tokens"
	}
	return errInvalid(param, fmt.Sprintf("%s is %d, above the %d output tokens %s gives one call", param, c.maxTokens, m.MaxOutputTokens, m.ID))
}
