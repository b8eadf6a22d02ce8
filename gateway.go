// Package gateway is the root of the modelgate module. Importing it plugs
// the gateway into Caddy: the `llm` app, the `llm_gateway`,
// `llm_reliability` and `llm_demo_upstream` HTTP handlers, their Caddyfile
// syntax, the `admin.api.llm` admin routes and the `caddy llm` command.
//
// It is the package xcaddy names:
//
//	xcaddy build v2.11.9 --with github.com/modelgate/gateway
//
// cmd/caddy is the main package xcaddy would generate for that build.
package gateway

import (
	// The gateway's Caddy modules register themselves when imported.
	_ "github.com/modelgate/gateway/caddymodule"
)
