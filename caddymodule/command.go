package caddymodule

import (
	"fmt"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "llm",
		Usage: "keys list|create|revoke|rotate ... | backup --output <file> [--address <admin>] [--config <file> [--adapter <name>]]",
		Short: "Manages the LLM gateway of a running Caddy",
		Long: `
Talks to a running Caddy through its admin API; it never opens the store
file itself. The admin address comes from --address, else from the config
file given with --config, else it is localhost:2019.

  caddy llm keys create --org acme [--name ci] [--admin] [--expires 720h]
      [--budget-day 5] [--budget-month 50] [--models a,b] [--create-org]

creates an API key for the org and prints the key once; only its hash is
stored. An org that does not exist is an error unless --create-org is
given. "caddy llm keys list --org acme" lists the org's keys (never the
secrets), "caddy llm keys revoke <id>" revokes one from the next request
on, and "caddy llm keys rotate <id>" gives it a new secret, printed once.

  caddy llm backup --output gateway-backup.db

writes a consistent copy of the store while the gateway keeps serving:
the copy is one read transaction of the store, taken after the queued call
records are committed. It is a bbolt file like the store itself; to
restore, stop the gateway and put the copy in the store's place.`,
		CobraFunc: registerLLMCommand,
	})
}

// registerLLMCommand adds the llm subcommands to cmd.
func registerLLMCommand(cmd *cobra.Command) {
	cmd.AddCommand(keysCommand())

	backup := &cobra.Command{
		Use:   "backup --output <file>",
		Short: "Writes a consistent copy of the store of the running gateway",
		RunE:  runBackup,
	}
	backup.Flags().StringP("output", "o", "", "file to write the copy to (required); an existing file is replaced only once the copy is complete")
	addAdminFlags(backup)
	cmd.AddCommand(backup)

	registerMoneyCommands(cmd)
	hookVersionCommand(cmd)
}

// addAdminFlags adds the flags that find the admin API.
func addAdminFlags(c *cobra.Command) {
	c.Flags().String("address", "", "address of the admin API (default: from the config, else localhost:2019)")
	c.Flags().StringP("config", "c", "", "config file to read the admin address from")
	c.Flags().StringP("adapter", "a", "", "name of the config adapter")
}

// adminAddress finds the admin API from the command's flags.
func adminAddress(cmd *cobra.Command) (string, error) {
	addrFlag, _ := cmd.Flags().GetString("address")
	configFile, _ := cmd.Flags().GetString("config")
	adapter, _ := cmd.Flags().GetString("adapter")
	addr, err := caddycmd.DetermineAdminAPIAddress(addrFlag, nil, configFile, adapter)
	if err != nil {
		return "", fmt.Errorf("finding the admin API: %w", err)
	}
	return addr, nil
}
