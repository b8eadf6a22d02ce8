// Command caddy is the gateway's binary: Caddy with its standard modules and
// the gateway's modules. It is the main package xcaddy generates for
// `xcaddy build --with github.com/modelgate/gateway`.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// plug in Caddy modules here
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/modelgate/gateway"
)

func main() {
	caddycmd.Main()
}
