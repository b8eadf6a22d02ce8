package caddymodule

import (
	"bytes"
	"fmt"
	"net/http"

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
	raw, err := adminRequest(cmd, http.MethodPost, "/llm/credit", creditRequest{Org: org, USD: usd, Reason: reason}, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("crediting %s: %w", org, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", bytes.TrimSpace(raw))
	return nil
}

func runAutoTopup(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	th, _ := cmd.Flags().GetFloat64("threshold")
	am, _ := cmd.Flags().GetFloat64("amount")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	raw, err := adminRequest(cmd, http.MethodPost, "/llm/auto_topup", autoTopupRequest{Org: org, ThresholdUSD: th, AmountUSD: am}, http.StatusOK)
	if err != nil {
		return fmt.Errorf("setting the auto top-up of %s: %w", org, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", bytes.TrimSpace(raw))
	return nil
}
