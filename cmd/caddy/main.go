// Command caddy is the gateway's binary: Caddy with its standard modules and
// the gateway's modules, as xcaddy would build it.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/modelgate/gateway/caddymodule"
)

func main() {
	caddycmd.Main()
}
