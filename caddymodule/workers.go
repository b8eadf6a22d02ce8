package caddymodule

import (
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/gateway/reliability"
)

// startWorkers builds the reliability API and starts the background work
// this config owns: the evaluation worker with the async eval pass, and the
// mailer that empties the outbox. Stop stops them; their claims in the store
// keep an old and a new config from doing the same work twice during a
// reload.
func (a *App) startWorkers(st *reliability.BoltStore) {
	logf := func(msg string, err error) {
		if err != nil {
			a.logger.Error(msg, zap.Error(err))
		} else {
			a.logger.Info(msg)
		}
	}
	fu := a.FairUse.fairUse()
	a.rt.api = &reliability.API{Store: st, Models: a.models, Logger: logf, FairUse: fu, SalesEmail: a.SalesEmail,
		Limits: reliability.Limits{MaxBodyBytes: a.limits.apiBody, JSON: a.limits.json, MaxPageBytes: a.retention.maxPage}}
	a.rt.worker = reliability.NewWorker(st, a.models, reliability.WorkerOptions{
		Logger: logf,
		// Routing learns only from scored calls: a deep queue and a few
		// workers keep the eval pass up with a busy operation.
		EvalPassQueue:   16384,
		EvalPassWorkers: 4,
		OnEvidence: func(e reliability.GateEvidence) {
			a.rt.shared.onEvidence(e)
			observeGateScore(e)
		},
		OnScored: func(e reliability.GateEvidence) {
			a.rt.shared.onScored(e)
			observeScoredCall(e)
		},
		FairUse: fu,
		PlanOf: func(orgID string) string {
			if org, err := st.Org(orgID); err == nil {
				return org.Plan
			}
			return "free"
		},
	})
	a.rt.worker.Start()
	a.startBatch(st)
	if a.SMTP != nil {
		pw := resolveSecret(a.SMTP.Password)
		if a.SMTP.PasswordEnv != "" {
			pw = os.Getenv(a.SMTP.PasswordEnv)
		}
		a.rt.mailer = reliability.NewMailer(st, reliability.MailerOptions{
			Addr: a.SMTP.Addr, From: a.SMTP.From, Username: a.SMTP.Username, Password: pw,
			Backoff: time.Second, MaxBackoff: 5 * time.Minute, Logger: logf,
		})
		a.rt.mailer.Start()
	} else if a.SalesEmail != "" {
		a.logger.Warn("sales_email is set but no smtp relay: training request emails stay in the outbox")
	}
}
