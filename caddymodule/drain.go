package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyevents"
	"go.uber.org/zap"
)

// Zero-loss reloads.
//
// A reload starts the new config's servers next to the old ones (on Linux
// each binds its own socket with SO_REUSEPORT), then shuts the old ones
// down. Go's shutdown closes the old servers' idle keep-alive connections
// at once, and a client that has just sent its next request on one of
// them gets a connection error: HTTP/1.1 has no way to tell a client that
// a connection is closing except on a response. So before the old config
// stops, the gateway drains it: for ReloadDrain its handlers answer every
// request with "Connection: close", which a client reads before it would
// send on the connection again. Busy connections are gone when the old
// servers shut down; only a connection left idle for the whole drain can
// still meet the race, and the old listener's accept queue is reset when
// it closes (the kernel setting net.ipv4.tcp_migrate_req=1 moves those
// connections to the new listener instead). HTTP/2 clients are told by
// the GOAWAY of the shutdown itself.

// defaultReloadDrain is App.ReloadDrain's default.
const defaultReloadDrain = 500 * time.Millisecond

// subscribeDrain makes the config drain its connections when a reload
// replaces it: Caddy emits "stopping" on the old config before it stops
// any app, while its servers still answer.
func (a *App) subscribeDrain(ctx caddy.Context) error {
	if a.reloadDrain <= 0 {
		return nil
	}
	evApp, err := ctx.App("events")
	if err != nil {
		return fmt.Errorf("loading the events app: %w", err)
	}
	ev, ok := evApp.(*caddyevents.App)
	if !ok {
		return nil
	}
	if err := ev.On("stopping", drainHandler{a}); err != nil {
		return fmt.Errorf("subscribing to stopping: %w", err)
	}
	return nil
}

// drainHandler drains the app's config when it is being replaced.
type drainHandler struct{ a *App }

// Handle implements caddyevents.Handler.
func (h drainHandler) Handle(context.Context, caddy.Event) error {
	a := h.a
	// Caddy makes the new config current before it stops the old one; a
	// stop with nothing to replace it (or the process exiting) has no
	// client to hand over to, and drains nothing.
	if caddy.Exiting() || caddy.ActiveContext().Context == nil {
		return nil
	}
	a.rt.draining.Store(true)
	a.logger.Info("config replaced: answering with Connection: close before the old servers stop",
		zap.Duration("drain", a.reloadDrain))
	time.Sleep(a.reloadDrain)
	return nil
}

// markDraining asks the client to close its connection after this
// response while the config is draining.
func (a *App) markDraining(w http.ResponseWriter) {
	if a.rt.draining.Load() {
		w.Header().Set("Connection", "close")
	}
}
