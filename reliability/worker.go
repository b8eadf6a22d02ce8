package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/sjson"
)

// Defaults of WorkerOptions.
const (
	// DefaultEvalPassQueue is how many calls may wait for the eval pass
	// before ScheduleEvalPass drops them.
	DefaultEvalPassQueue = 1024
	// DefaultEvalPassWorkers is how many calls the eval pass scores at once.
	DefaultEvalPassWorkers = 2
	// DefaultWorkerRetryDelay is the pause before the worker reads the
	// store again after it failed to.
	DefaultWorkerRetryDelay = time.Second
)

// GateEvidence is what one eval pass learned about the path that served a
// call. For OnScored, EvaluatorID is empty and Score is 1 or 0.
type GateEvidence struct {
	OrgID       string
	OperationID string
	// OperationKey is the operation's key, a name fit for a metric label.
	OperationKey      string
	PathKey           string
	Provider          string
	PromptFingerprint string
	EvaluatorID       string
	Score             float64
	Passed            bool
}

// WorkerOptions configures a Worker.
type WorkerOptions struct {
	// OnEvidence receives every ship gate score the eval pass makes, for
	// routing to judge the path that served the call.
	OnEvidence func(GateEvidence)
	// OnScored receives each scored call's overall verdict (every gate
	// passed or not), for routing's memory of which path passed a prompt.
	OnScored func(GateEvidence)
	// PlanOf returns an org's plan, which decides the eval-gated refund.
	// Nil reads the plan stored with the org.
	PlanOf func(orgID string) string
	// FairUse caps the eval-gated refunds (its value caps and EvalGate)
	// and sets the rule that flags a gate unreliable; the zero value means
	// the defaults.
	FairUse FairUse
	// Logger receives what goes wrong without a caller to tell: dropped
	// eval passes, failed model calls, store errors. Nil drops them.
	Logger func(msg string, err error)
	// Now is the clock of started_at, completed_at and scored_at. Nil
	// means time.Now.
	Now func() time.Time
	// EvalPassQueue is how many calls may wait for the eval pass. Default
	// DefaultEvalPassQueue.
	EvalPassQueue int
	// EvalPassWorkers is how many calls are scored at once. Default
	// DefaultEvalPassWorkers.
	EvalPassWorkers int
	// RetryDelay is the pause after a store error. Default
	// DefaultWorkerRetryDelay.
	RetryDelay time.Duration
}

// withDefaults fills in the zero fields.
func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EvalPassQueue <= 0 {
		o.EvalPassQueue = DefaultEvalPassQueue
	}
	if o.EvalPassWorkers <= 0 {
		o.EvalPassWorkers = DefaultEvalPassWorkers
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultWorkerRetryDelay
	}
	return o
}

// Worker states.
const (
	workerNew int32 = iota
	workerRunning
	workerStopped
)

// Worker runs the reliability domain's background work: evaluations, one
// at a time in creation order, and the asynchronous eval pass over served
// calls. Every goroutine it starts belongs to it and ends in Stop.
//
// Evaluations survive restarts: on Start, an evaluation a previous process
// left running resumes where its stored results end, and pending ones are
// picked up. Queued eval passes do not: they are a best-effort check, and
// a Stop drops the ones still waiting.
type Worker struct {
	store  *BoltStore
	models ModelCaller
	opts   WorkerOptions
	queue  chan Call

	state  atomic.Int32
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewWorker returns a worker of the store that makes model calls through
// models; Start runs it.
func NewWorker(store *BoltStore, models ModelCaller, opts WorkerOptions) *Worker {
	opts = opts.withDefaults()
	return &Worker{store: store, models: models, opts: opts, queue: make(chan Call, opts.EvalPassQueue)}
}

// Start starts the evaluation goroutine and the eval pass goroutines.
// Starting a started or stopped worker does nothing.
func (w *Worker) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.state.CompareAndSwap(workerNew, workerRunning) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Add(1 + w.opts.EvalPassWorkers)
	go w.runEvaluations(ctx)
	for range w.opts.EvalPassWorkers {
		go w.runEvalPasses(ctx)
	}
}

// Stop ends the worker's goroutines and waits for them. An evaluation cut
// off stays running in the store, to be resumed by the next worker.
func (w *Worker) Stop() {
	w.mu.Lock()
	prev := w.state.Swap(workerStopped)
	cancel := w.cancel
	w.mu.Unlock()
	if prev != workerRunning {
		return
	}
	cancel()
	w.wg.Wait()
}

// Running reports whether the worker was started and has not stopped.
func (w *Worker) Running() bool { return w.state.Load() == workerRunning }

// EvalPassQueue reports how many calls wait for the eval pass, and how
// many may wait before more are dropped.
func (w *Worker) EvalPassQueue() (waiting, capacity int) { return len(w.queue), cap(w.queue) }

// runEvaluations runs open evaluations until the worker stops.
func (w *Worker) runEvaluations(ctx context.Context) {
	defer w.wg.Done()
	// Another worker of this process may have skipped evaluations this
	// one held: wake it, so they do not wait for the next creation.
	defer w.store.evalReady.notify()
	for {
		ready := w.store.evalReady.wait()
		ran, err := w.runOpen(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.log("running evaluations", err)
			if !sleep(ctx, w.opts.RetryDelay) {
				return
			}
			continue
		}
		if ran > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-ready:
		}
	}
}

// runOpen runs every open evaluation no other worker holds, oldest first.
func (w *Worker) runOpen(ctx context.Context) (int, error) {
	ids, err := w.store.openEvaluations()
	if err != nil {
		return 0, err
	}
	ran := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			return ran, nil
		}
		key := "evaluation:" + id
		if !w.store.claims.claim(key) {
			continue
		}
		err := w.runEvaluation(ctx, id)
		w.store.claims.release(key)
		if err != nil {
			return ran, err
		}
		ran++
	}
	return ran, nil
}

// runEvaluation scores what is left of one evaluation and finishes it. A
// model or scoring failure fails the evaluation with the reason; a stop
// leaves it running for the next worker. The error is a store failure
// that kept the outcome from being recorded.
func (w *Worker) runEvaluation(ctx context.Context, id string) error {
	e, err := w.store.StartEvaluation(id, w.opts.Now())
	if errors.Is(err, ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	items, evaluators, err := w.store.evaluationInputs(e)
	if err != nil {
		return w.fail(id, err.Error())
	}
	scorers := make([]*scorer, len(evaluators))
	for i, ev := range evaluators {
		if scorers[i], err = newScorer(ev); err != nil {
			return w.fail(id, err.Error())
		}
	}
	if e.ModelVersion != "" && w.models == nil {
		return w.fail(id, "no model caller is configured to run model_version "+e.ModelVersion)
	}
	done, err := w.store.scoredPairs(id)
	if err != nil {
		return err
	}
	for _, it := range items {
		var todo []*scorer
		for _, sc := range scorers {
			if !done[string(resultKey(id, it.ID, sc.ev.ID))] {
				todo = append(todo, sc)
			}
		}
		if len(todo) == 0 {
			continue
		}
		results, reason, err := w.scoreItem(ctx, e, it, todo)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return w.fail(id, reason)
		}
		if err := w.store.AddEvaluationResults(id, results); err != nil {
			return err
		}
	}
	_, err = w.store.FinishEvaluation(id, w.opts.Now())
	return err
}

// scoreItem scores one item with the scorers. With the evaluation's
// model_version, the item's input goes to that model and its reply is the
// output scored; without, the expected output is scored as the output. An
// item that cannot be scored gets a 0 with the reason in details; an error
// (a failed model call) comes with the reason the evaluation fails with.
func (w *Worker) scoreItem(ctx context.Context, e Evaluation, it DatasetItem, scorers []*scorer) ([]EvaluationResult, string, error) {
	in := ScoreInput{Input: it.Input, Output: it.ExpectedOutput, ExpectedOutput: it.ExpectedOutput}
	var (
		reply     string
		itemError string
	)
	if e.ModelVersion != "" {
		prompt := textOf(it.Input)
		if prompt == "" {
			itemError = "the item has no input to send to " + e.ModelVersion
		} else {
			var err error
			if reply, err = w.models.Chat(ctx, e.OrgID, e.ModelVersion, prompt); err != nil {
				return nil, fmt.Sprintf("model %s failed on item %s: %v", e.ModelVersion, it.ID, err), err
			}
			in.Output = jsonString(reply)
		}
	}
	results := make([]EvaluationResult, 0, len(scorers))
	for _, sc := range scorers {
		r := EvaluationResult{DatasetItemID: it.ID, EvaluatorID: sc.ev.ID}
		if itemError != "" {
			r.Details = errorDetails(itemError)
		} else {
			score, details, err := sc.score(ctx, w.models, e.OrgID, in)
			switch {
			case err == nil:
				r.Score, r.Details = score, details
			case errors.Is(err, ErrUnscorable):
				r.Details = errorDetails(err.Error())
			default:
				return nil, fmt.Sprintf("scoring item %s failed: %v", it.ID, err), err
			}
		}
		if e.ModelVersion != "" && itemError == "" {
			// Keep what the model answered beside its score, so a low
			// score can be read against the answer.
			if withOutput, err := sjson.SetBytes(r.Details, "output", clip(reply)); err == nil {
				r.Details = withOutput
			}
		}
		results = append(results, r)
	}
	return results, "", nil
}

// errorDetails is the details of an item that could not be scored.
func errorDetails(reason string) json.RawMessage {
	data, _ := json.Marshal(map[string]string{"error": clip(reason)}) // strings always encode
	return data
}

// fail marks the evaluation failed with reason.
func (w *Worker) fail(id, reason string) error {
	w.log("evaluation "+id+" failed", errors.New(reason))
	_, err := w.store.FailEvaluation(id, reason, w.opts.Now())
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// log hands a message to the configured logger.
func (w *Worker) log(msg string, err error) {
	if w.opts.Logger != nil {
		w.opts.Logger(msg, err)
	}
}
