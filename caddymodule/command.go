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
		Usage: "keys create --org <name> [--address <admin>] [--config <file> [--adapter <name>]]",
		Short: "Manages the LLM gateway of a running Caddy",
		Long: `
Talks to a running Caddy through its admin API; it never opens the store
file itself.

  caddy llm keys create --org acme

creates an API key for the org (creating the org if needed) and prints the
key once. Only its hash is stored.`,
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
	create.Flags().String("address", "", "address of the admin API (default: from the config, else localhost:2019)")
	create.Flags().StringP("config", "c", "", "config file to read the admin address from")
	create.Flags().StringP("adapter", "a", "", "name of the config adapter")
	keys.AddCommand(create)
	cmd.AddCommand(keys)
}

func runKeysCreate(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	addrFlag, _ := cmd.Flags().GetString("address")
	configFile, _ := cmd.Flags().GetString("config")
	adapter, _ := cmd.Flags().GetString("adapter")
	addr, err := caddycmd.DetermineAdminAPIAddress(addrFlag, nil, configFile, adapter)
	if err != nil {
		return fmt.Errorf("finding the admin API: %w", err)
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
