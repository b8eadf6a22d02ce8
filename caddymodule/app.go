// Package caddymodule is the Caddy glue of the gateway: the `llm` app, the
// HTTP handlers, the Caddyfile syntax, the admin API routes and the CLI
// subcommand. It wires the routing, translate and reliability packages and
// holds no domain logic of its own.
package caddymodule

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
	"github.com/modelgate/gateway/routing"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the `llm` app: it owns the store, the catalog and the API keys, and
// the background work that outlives a request. Handlers reach it through
// ctx.App("llm").
type App struct {
	// Store is the path of the bbolt file. Default: gateway.db under Caddy's
	// data directory.
	Store string `json:"store,omitempty"`
	// KeyPrefix is the prefix of API keys created at run time:
	// <prefix>_live_<random>. Default "mg".
	KeyPrefix string `json:"key_prefix,omitempty"`
	// MaxBodyBytes bounds the body of POST /chat/completions, /messages
	// and /responses (413 request_too_large; see Limits for the other
	// endpoints). Default 32 MiB.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	// CommitBatch is the most call records written in one commit. Default 1024.
	CommitBatch int `json:"commit_batch,omitempty"`
	// CommitDelay is the longest a call record waits before it is committed;
	// a crash loses at most this window of records. Default 50ms.
	CommitDelay caddy.Duration `json:"commit_delay,omitempty"`
	// Orgs declares organisations and their keys.
	Orgs []OrgConfig `json:"orgs,omitempty"`
	// Providers declares the upstream services.
	Providers []ProviderConfig `json:"providers,omitempty"`
	// Models declares the models clients may ask for.
	Models []ModelConfig `json:"models,omitempty"`
	// Routers declares router models (router-1, router-embed-1).
	Routers []RouterConfig `json:"routers,omitempty"`
	// Pricing sets the routed share and the tier multipliers.
	Pricing *PricingConfig `json:"pricing,omitempty"`
	// RateLimit is the default limit of every API key.
	RateLimit *RateLimitConfig `json:"rate_limit,omitempty"`
	// Cache bounds the response cache (opt-in per org or per request).
	Cache *CacheConfig `json:"cache,omitempty"`
	// SalesEmail receives an email for every training request.
	SalesEmail string `json:"sales_email,omitempty"`
	// SMTP is the relay that sends those emails; without it they wait in
	// the store's outbox.
	SMTP *SMTPConfig `json:"smtp,omitempty"`
	// FairUse caps the credits that automatic refunds (thumbs_down
	// feedback, the paid plan's eval-gated refunds) give per org per
	// rolling 24 hours, and sets when a gate is flagged unreliable.
	FairUse *FairUseConfig `json:"fair_use,omitempty"`
	// Limits bounds what one request may ask of the gateway: body sizes
	// per endpoint, JSON depth and size, messages and tools per call,
	// header size, calls in flight per org and the body's read time.
	Limits *LimitsConfig `json:"limits,omitempty"`
	// Retention bounds what the store keeps of each call's payloads, for
	// how long, and the size of a list page.
	Retention *RetentionConfig `json:"retention,omitempty"`
	// RedactHeaders names more request headers that carry credentials
	// (a custom key header, say): the llm_redact log encoder never writes
	// their values, as it never writes Authorization's or X-Api-Key's.
	RedactHeaders []string `json:"redact_headers,omitempty"`
	// ReloadDrain is how long a config being replaced by a reload answers
	// every request with "Connection: close" before its servers shut down,
	// so that clients leave its keep-alive connections on a response
	// rather than have them closed under a request they just sent.
	// Default 500ms; negative turns draining off.
	ReloadDrain caddy.Duration `json:"reload_drain,omitempty"`

	catalog *routing.Catalog
	// offModels maps the configured models and routers whose providers
	// are all switched off to the reason, which names the environment
	// variables to set.
	offModels map[string]string
	storePath string
	models    *modelCaller
	pricing   routing.Pricing
	scheduler *routing.Scheduler
	orgConfig map[string]*OrgConfig
	// configKeys maps the hash of each key declared in the config to its org's name.
	configKeys map[[32]byte]string
	orgModels  map[string]map[string]bool // org name -> allowed model ids
	rt         *runtimeState
	logger     *zap.Logger
	// limits and retention are Limits and Retention with their defaults.
	limits      limits
	retention   retention
	reloadDrain time.Duration
}

// SMTPConfig is an SMTP relay.
type SMTPConfig struct {
	// Addr is host:port of the relay.
	Addr string `json:"addr"`
	// From is the sender address.
	From string `json:"from"`
	// Username and Password authenticate to the relay (PLAIN), when set.
	Username string `json:"username,omitempty"`
	// Password: see Username. PasswordEnv reads it from the environment instead.
	Password string `json:"password,omitempty"`
	// PasswordEnv names an environment variable holding the password.
	PasswordEnv string `json:"password_env,omitempty"`
}

// FairUseConfig caps automatic refunds per org per rolling 24 hours (see
// reliability.FairUse): thumbs_down refunds by count and, with eval-gated
// refunds, by value; eval-gated refunds (paid plan) by a value cap of their
// own; and it sets when a ship gate that fails nearly every call is
// flagged unreliable. A zero field takes its default.
type FairUseConfig struct {
	// MaxRefunds is the most thumbs_down refunds. Default 100.
	MaxRefunds int `json:"max_refunds,omitempty"`
	// MaxShare is the largest share of the org's calls refunded by
	// thumbs_down. Default 0.5 (when max_refunds is not set either).
	MaxShare float64 `json:"max_share,omitempty"`
	// MaxValueShare is the largest share of what the org was charged that
	// its refunds, thumbs_down and eval-gated together, give back.
	// Default 0.5.
	MaxValueShare float64 `json:"max_value_share,omitempty"`
	// MaxRefundUSD is the most the org's refunds give back, in USD.
	// Default none.
	MaxRefundUSD float64 `json:"max_refund_usd,omitempty"`
	// AllowanceUSD is the value of refunds the share caps never hold back,
	// so that a first refund of a small call is always possible. Default
	// 0.25; negative means none.
	AllowanceUSD float64 `json:"allowance_usd,omitempty"`
	// EvalMaxValueShare is the largest share of what the org was charged
	// that eval-gated refunds give back. Default 0.25.
	EvalMaxValueShare float64 `json:"eval_max_value_share,omitempty"`
	// EvalMaxRefundUSD is the most eval-gated refunds give back, in USD.
	// Default none.
	EvalMaxRefundUSD float64 `json:"eval_max_refund_usd,omitempty"`
	// GateMinScored is how many of its last 50 scored calls a gate needs
	// before it can be flagged unreliable. Default 20.
	GateMinScored int `json:"gate_min_scored,omitempty"`
	// GateFailShare is the share of those calls a gate must fail to be
	// flagged unreliable. Default 0.9.
	GateFailShare float64 `json:"gate_fail_share,omitempty"`
}

// fairUse is the reliability setting of c; a nil c means the defaults.
func (c *FairUseConfig) fairUse() reliability.FairUse {
	if c == nil {
		return reliability.FairUse{}
	}
	return reliability.FairUse{
		MaxRefunds: c.MaxRefunds, MaxShare: c.MaxShare,
		MaxValueShare: c.MaxValueShare, MaxRefundUSD: c.MaxRefundUSD, AllowanceUSD: c.AllowanceUSD,
		EvalGate: reliability.EvalGateLimits{
			MaxValueShare: c.EvalMaxValueShare, MaxRefundUSD: c.EvalMaxRefundUSD,
			MinScored: c.GateMinScored, MaxFailShare: c.GateFailShare,
		},
	}
}

// runtimeState is what the app learns while it runs.
type runtimeState struct {
	// shared is the state every config on the same store file shares.
	shared *sharedState
	// batch runs the queued batch-tier calls.
	batch    *batchState
	api      *reliability.API
	worker   *reliability.Worker
	mailer   *reliability.Mailer
	mu       sync.Mutex // guards opening and stopping
	stopped  bool
	store    atomic.Pointer[reliability.BoltStore]
	orgIDs   sync.Map // org name -> org id, filled in Start
	keyCache sync.Map // [32]byte -> cachedKey, keys created at run time
	topups   sync.Map // org id -> *topupState
	// draining is set when a reload replaces this config (see drain.go).
	draining atomic.Bool
	// pruneQuit and pruneDone stop and await the payload pruner.
	pruneQuit, pruneDone chan struct{}
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "llm",
		New: func() caddy.Module { return new(App) },
	}
}

// Provision checks the configuration and builds the catalog. It opens no
// file: `caddy validate` provisions too, and a reload provisions the new
// config while the old one still holds the store.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	a.rt = new(runtimeState)
	a.models = &modelCaller{app: a}
	if a.KeyPrefix == "" {
		a.KeyPrefix = "mg"
	}
	if a.MaxBodyBytes <= 0 {
		a.MaxBodyBytes = 32 << 20
	}
	var err error
	if a.limits, err = a.Limits.resolve(a.MaxBodyBytes); err != nil {
		return err
	}
	if a.retention, err = a.Retention.resolve(); err != nil {
		return err
	}
	registerSecretHeaders(a.RedactHeaders...)
	a.warnPlainSecrets()
	a.reloadDrain = defaultReloadDrain
	if a.ReloadDrain != 0 {
		a.reloadDrain = time.Duration(a.ReloadDrain)
	}
	if err := a.subscribeDrain(ctx); err != nil {
		return err
	}
	path := a.Store
	if path == "" {
		path = filepath.Join(caddy.AppDataDir(), "llm", "gateway.db")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store path %q: %w", path, err)
	}
	a.storePath = abs

	cat, off, err := buildCatalog(a.Providers, a.Models, a.Routers, time.Now().Unix())
	if err != nil {
		return fmt.Errorf("loading catalog: %w", err)
	}
	a.catalog = cat
	offProviders := switchedOff(a.Providers, cat)
	for _, name := range off {
		if why, ok := offProviders[name]; ok {
			a.logger.Info("provider switched off", zap.String("provider", name), zap.String("reason", why))
		} else if router, ok := strings.CutPrefix(name, "router "); ok {
			a.logger.Info("router switched off with the model it stands in for", zap.String("router", router))
		} else {
			a.logger.Info("provider switched off: its base URL or credential is not set", zap.String("provider", name))
		}
	}
	a.offModels = offModelReasons(a.Providers, a.Models, a.Routers, cat)

	if a.Pricing != nil {
		a.pricing = routing.Pricing{RoutedShare: a.Pricing.RoutedShare, TierMultipliers: a.Pricing.TierMultipliers}
		if err := a.pricing.Validate(); err != nil {
			return fmt.Errorf("pricing: %w", err)
		}
	}
	limits := map[string]int{}
	for _, pc := range a.Providers {
		if pc.MaxConcurrency > 0 {
			limits[pc.Name] = pc.MaxConcurrency
		}
	}
	a.scheduler = routing.NewScheduler(limits)
	a.orgConfig = map[string]*OrgConfig{}
	for i := range a.Orgs {
		a.orgConfig[a.Orgs[i].Name] = &a.Orgs[i]
	}
	a.configKeys = map[[32]byte]string{}
	a.orgModels = map[string]map[string]bool{}
	for _, oc := range a.Orgs {
		if oc.Name == "" {
			return errors.New("org with no name")
		}
		if oc.Plan != "" && oc.Plan != "free" && oc.Plan != "paid" {
			return fmt.Errorf("org %q: plan %q (want free or paid)", oc.Name, oc.Plan)
		}
		for _, k := range oc.Keys {
			if !validKeyFormat(k) {
				return fmt.Errorf("org %q: a key does not have the form <prefix>_live_<random>", oc.Name)
			}
			a.configKeys[reliability.HashKey(k)] = oc.Name
		}
		for _, h := range oc.KeyHashes {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return fmt.Errorf("org %q: key hash %q is not a hex SHA-256 digest", oc.Name, h)
			}
			a.configKeys[[32]byte(b)] = oc.Name
		}
		if len(oc.Models) > 0 {
			allowed := map[string]bool{}
			for _, m := range oc.Models {
				allowed[m] = true
			}
			a.orgModels[oc.Name] = allowed
		}
	}
	return nil
}

// stores shares one open bbolt file per path across config reloads: bbolt
// holds an exclusive lock, so a reload must reuse the file, not reopen it.
var stores = caddy.NewUsagePool()

type pooledStore struct {
	*reliability.BoltStore
	shared *sharedState
}

// Destruct saves what routing learned, flushes pending records and closes
// the file when the last config using it stops.
func (p pooledStore) Destruct() error {
	p.shared.stop(p.BoltStore)
	return p.Close()
}

// Start opens the store (or shares the one a previous config opened) and
// makes sure the configured orgs exist.
func (a *App) Start() error {
	_, err := a.open()
	return err
}

// open acquires the store once per config. Caddy starts apps in no fixed
// order, so the first request of a new config may arrive before this app's
// Start: whichever comes first opens it. Provision never does, so `caddy
// validate` never touches the file.
func (a *App) open() (*reliability.BoltStore, error) {
	a.rt.mu.Lock()
	defer a.rt.mu.Unlock()
	if st := a.rt.store.Load(); st != nil {
		return st, nil
	}
	if a.rt.stopped {
		return nil, errStopped
	}
	val, _, err := stores.LoadOrNew(a.storePath, func() (caddy.Destructor, error) {
		s, err := reliability.OpenBolt(a.storePath, reliability.BoltOptions{
			Timeout:    10 * time.Second,
			BatchSize:  a.CommitBatch,
			BatchDelay: time.Duration(a.CommitDelay),
			OnError: func(err error) {
				a.logger.Error("store write failed", zap.Error(err))
			},
			OnCommit: observeCommit,
			OnRefund: observeRefund,
		})
		if err != nil {
			return nil, err
		}
		return pooledStore{s, newSharedState(s, a.Cache, a.logger)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", a.storePath, err)
	}
	st := val.(pooledStore).BoltStore
	a.rt.shared = val.(pooledStore).shared
	for _, oc := range a.Orgs {
		org, err := st.EnsureOrg(oc.Name)
		if err == nil && oc.Plan != "" && org.Plan != oc.Plan {
			org, err = st.SetOrgPlan(org.ID, oc.Plan)
		}
		if err != nil {
			_, _ = stores.Delete(a.storePath)
			return nil, fmt.Errorf("org %q: %w", oc.Name, err)
		}
		a.rt.orgIDs.Store(oc.Name, org.ID)
	}
	a.startWorkers(st)
	a.startPruner(st)
	a.rt.store.Store(st)
	a.logger.Info("llm gateway started", zap.String("store", a.storePath),
		zap.Int("models", len(a.catalog.Models())), zap.Int("providers", len(a.catalog.Providers())))
	return st, nil
}

// Stop releases this config's use of the store; the file closes, after a
// final commit, when no config uses it any more. Handlers of this config
// that are still streaming keep their reference and finish their writes.
func (a *App) Stop() error {
	a.rt.mu.Lock()
	defer a.rt.mu.Unlock()
	a.rt.stopped = true
	if a.rt.store.Load() == nil {
		return nil
	}
	a.stopBatch()
	a.stopPruner()
	a.rt.worker.Stop()
	if a.rt.mailer != nil {
		a.rt.mailer.Stop()
	}
	_, err := stores.Delete(a.storePath)
	return err
}

// storeOrNil returns the open store, opening it if this config has not yet;
// nil once the app has stopped without ever opening it, or when it cannot
// be opened.
func (a *App) storeOrNil() *reliability.BoltStore {
	if st := a.rt.store.Load(); st != nil {
		return st
	}
	st, err := a.open()
	if err != nil {
		return nil
	}
	return st
}

// principal is who a request acts for.
type principal struct {
	orgID   string
	orgName string
	plan    string
	// keyID identifies the key that authenticated, for records such as
	// requested_by_user_id; config keys get an id from their hash.
	keyID string
	// hint is the key's non-secret reminder (reliability.KeyHint), for
	// the access log; empty when the call came from no key.
	hint    string
	allowed map[string]bool // nil: every model
	// admin lets the key manage its org's keys over the API.
	admin bool
	// budget caps what the key's calls cost per UTC day and month; nil
	// means none.
	budget *reliability.KeyBudget
	// expiresAt is when the key stops working; zero means never.
	expiresAt time.Time
}

// mayUse reports whether the key (within its org's models) may call the model.
func (p *principal) mayUse(model string) bool { return p.allowed == nil || p.allowed[model] }

// authenticate resolves an API key to its principal. Keys are compared as
// SHA-256 digests in constant time; the plain key is never kept. A stored
// key is cached with the store's KeysVersion, so that a revocation or a
// rotation takes effect from the next request on; its expiry is checked at
// every use. Every use is noted for the key's last_used_at (in memory; the
// store writes it in batches, see reliability.KeyUseInterval).
func (a *App) authenticate(key string) (*principal, error) {
	if !validKeyFormat(key) {
		return nil, errBadKey
	}
	h := reliability.HashKey(key)
	now := time.Now()
	for stored, org := range a.configKeys {
		if subtle.ConstantTimeCompare(stored[:], h[:]) == 1 {
			id, ok := a.rt.orgIDs.Load(org)
			if !ok {
				if a.storeOrNil() == nil {
					return nil, errNotStarted
				}
				id, _ = a.rt.orgIDs.Load(org)
			}
			p := &principal{orgID: id.(string), orgName: org, plan: a.orgPlan(org), keyID: configKeyID(h),
				hint: reliability.KeyHint(key), allowed: a.orgModels[org]}
			if st := a.rt.store.Load(); st != nil {
				st.TouchKey(p.keyID, now)
			}
			return p, nil
		}
	}
	st := a.storeOrNil()
	if st == nil {
		return nil, errNotStarted
	}
	// The version is read before the key, so that an entry cached from a
	// read older than a revocation never carries the version after it.
	version := st.KeysVersion()
	if v, ok := a.rt.keyCache.Load(h); ok && v.(cachedKey).version == version {
		return admitKey(st, v.(cachedKey).p, now)
	}
	rec, err := st.KeyByHash(h)
	if errors.Is(err, reliability.ErrNotFound) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	if subtle.ConstantTimeCompare(rec.Hash[:], h[:]) != 1 {
		return nil, errBadKey
	}
	if rec.RevokedAt != nil {
		return nil, errKeyRevoked
	}
	org, err := st.Org(rec.OrgID)
	if err != nil {
		return nil, fmt.Errorf("look up org of key: %w", err)
	}
	p := a.principalForKey(org, rec)
	a.rt.keyCache.Store(h, cachedKey{p: p, version: version})
	return admitKey(st, p, now)
}

// principalFor is who acts for a stored org through the key keyID: a
// stored key brings its model list and budget (a batch call queued by a
// key runs under them); any other id, such as "internal" or a config
// key's, acts with the org's models alone.
func (a *App) principalFor(org reliability.Org, keyID string) *principal {
	if st := a.rt.store.Load(); st != nil && strings.HasPrefix(keyID, "key_") && !isConfigKeyID(keyID) {
		if rec, err := st.KeyByID(keyID); err == nil && rec.OrgID == org.ID {
			return a.principalForKey(org, rec)
		}
	}
	return &principal{orgID: org.ID, orgName: org.Name, plan: org.Plan, keyID: keyID, allowed: a.orgModels[org.Name]}
}

// orgPlan is the plan a config org declares ("free" when it says none).
func (a *App) orgPlan(name string) string {
	for _, oc := range a.Orgs {
		if oc.Name == name && oc.Plan != "" {
			return oc.Plan
		}
	}
	return "free"
}

var (
	errBadKey     = errors.New("invalid API key")
	errNotStarted = errors.New("the gateway is starting")
	errStopped    = errors.New("the gateway has stopped")
)

// Interface guards.
var (
	_ caddy.App         = (*App)(nil)
	_ caddy.Provisioner = (*App)(nil)
)
