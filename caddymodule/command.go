package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "llm",
		Usage: "keys create --org <name> | backup --output <file> [--address <admin>] [--config <file> [--adapter <name>]]",
		Short: "Manages the LLM gateway of a running Caddy",
		Long: `
Talks to a running Caddy through its admin API; it never opens the store
file itself. The admin address comes from --address, else from the config
file given with --config, else it is localhost:2019.

  caddy llm keys create --org acme

creates an API key for the org (creating the org if needed) and prints the
key once. Only its hash is stored.

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
	keys := &cobra.Command{Use: "keys", Short: "Manages API keys"}
	create := &cobra.Command{
		Use:   "create --org <name>",
		Short: "Creates an API key and prints it once",
		RunE:  runKeysCreate,
	}
	create.Flags().String("org", "", "organisation the key acts for (required)")
	addAdminFlags(create)
	keys.AddCommand(create)
	cmd.AddCommand(keys)

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

func runKeysCreate(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	addr, err := adminAddress(cmd)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"org": org})
	headers := http.Header{"Content-Type": {"application/json"}}
	resp, err := caddycmd.AdminAPIRequest(addr, http.MethodPost, "/llm/keys", headers, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("creating key: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading answer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("creating key: admin API answered %s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	var out createKeyResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("decoding answer: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out.Key)
	fmt.Fprintf(cmd.ErrOrStderr(), "key %s for org %s (%s); it is shown only this once\n", out.ID, out.Org, out.OrgID)
	return nil
}
