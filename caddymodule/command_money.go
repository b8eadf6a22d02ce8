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

// registerMoneyCommands adds `caddy llm credit` and `caddy llm auto-topup`.
func registerMoneyCommands(cmd *cobra.Command) {
	credit := &cobra.Command{
		Use:   "credit --org <name> --usd <amount> [--reason <text>]",
		Short: "Credits an org by hand (a ledger entry of kind credit)",
		RunE:  runCredit,
	}
	credit.Flags().String("org", "", "organisation to credit (required; it must exist)")
	credit.Flags().Float64("usd", 0, "amount to credit, USD (required)")
	credit.Flags().String("reason", "", "reason kept on the ledger entry")
	addAdminFlags(credit)
	cmd.AddCommand(credit)

	topup := &cobra.Command{
		Use:   "auto-topup --org <name> --threshold <usd> --amount <usd>",
		Short: "Sets an org's auto top-up at run time (--amount 0 turns it off)",
		RunE:  runAutoTopup,
	}
	topup.Flags().String("org", "", "organisation (required; it must exist)")
	topup.Flags().Float64("threshold", 0, "credit under which a top-up is made, USD")
	topup.Flags().Float64("amount", 0, "what each top-up credits, USD; 0 turns auto top-up off")
	addAdminFlags(topup)
	cmd.AddCommand(topup)
}

func runCredit(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	usd, _ := cmd.Flags().GetFloat64("usd")
	reason, _ := cmd.Flags().GetString("reason")
	if org == "" || usd <= 0 {
		return fmt.Errorf("--org and a positive --usd are required")
	}
	raw, err := adminPost(cmd, "/llm/credit", creditRequest{Org: org, USD: usd, Reason: reason}, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("crediting %s: %w", org, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", raw)
	return nil
}

func runAutoTopup(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	th, _ := cmd.Flags().GetFloat64("threshold")
	am, _ := cmd.Flags().GetFloat64("amount")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	raw, err := adminPost(cmd, "/llm/auto_topup", autoTopupRequest{Org: org, ThresholdUSD: th, AmountUSD: am}, http.StatusOK)
	if err != nil {
		return fmt.Errorf("setting the auto top-up of %s: %w", org, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", raw)
	return nil
}

// adminPost sends body as JSON to the admin API and returns the answer,
// which must have status want.
func adminPost(cmd *cobra.Command, path string, body any, want int) ([]byte, error) {
	addr, err := adminAddress(cmd)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	resp, err := caddycmd.AdminAPIRequest(addr, http.MethodPost, path, http.Header{"Content-Type": {"application/json"}}, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading answer: %w", err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("admin API answered %s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	return bytes.TrimSpace(raw), nil
}
