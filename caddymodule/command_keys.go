package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/modelgate/gateway/reliability"
)

// keysCommand is `caddy llm keys list|create|revoke|rotate`, which talks to
// the admin API's /llm/keys routes (see keyadmin.go) and never opens the
// store.
func keysCommand() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Lists, creates, revokes and rotates API keys"}

	list := &cobra.Command{
		Use:   "list --org <name>",
		Short: "Lists an org's API keys (never their secrets)",
		Args:  cobra.NoArgs,
		RunE:  runKeysList,
	}
	list.Flags().String("org", "", "organisation whose keys to list (required)")
	list.Flags().Bool("json", false, "print the keys as JSON, one object a line, instead of a table")
	addAdminFlags(list)

	create := &cobra.Command{
		Use:   "create --org <name> [--name N] [--admin] [--expires 720h] [--budget-day USD] [--budget-month USD] [--models a,b] [--create-org]",
		Short: "Creates an API key and prints it once",
		Args:  cobra.NoArgs,
		RunE:  runKeysCreate,
	}
	create.Flags().String("org", "", "organisation the key acts for (required; it must exist unless --create-org)")
	create.Flags().Bool("create-org", false, "create the org when none has this name")
	create.Flags().String("name", "", "a label that says what the key is for")
	create.Flags().Bool("admin", false, "let the key list, create, revoke and rotate its own org's keys over /v1/keys")
	create.Flags().String("expires", "", "lifetime of the key, e.g. 720h or 30d (default: never expires)")
	create.Flags().Float64("budget-day", 0, "most the key's calls may cost per UTC day, USD (default: no cap)")
	create.Flags().Float64("budget-month", 0, "most the key's calls may cost per UTC month, USD (default: no cap)")
	create.Flags().StringSlice("models", nil, "model ids the key may call, comma separated, within its org's (default: all of the org's)")
	addAdminFlags(create)

	revoke := &cobra.Command{
		Use:   "revoke <key id>",
		Short: "Revokes an API key: it is refused from the next request on",
		Args:  cobra.ExactArgs(1),
		RunE:  runKeysRevoke,
	}
	addAdminFlags(revoke)

	rotate := &cobra.Command{
		Use:   "rotate <key id>",
		Short: "Gives an API key a new secret, printed once; the old one is refused from the next request on",
		Args:  cobra.ExactArgs(1),
		RunE:  runKeysRotate,
	}
	addAdminFlags(rotate)

	keys.AddCommand(list, create, revoke, rotate)
	return keys
}

// adminRequest sends one request of the llm commands to the admin API
// (body, when not nil, as JSON) and returns the answer's body; an answer
// other than want is an error with the admin API's message.
func adminRequest(cmd *cobra.Command, method, path string, body any, want int) ([]byte, error) {
	addr, err := adminAddress(cmd)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	headers := http.Header{}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
		headers.Set("Content-Type", "application/json")
	}
	resp, err := caddycmd.AdminAPIRequest(addr, method, path, headers, rd)
	if err != nil {
		return nil, errors.New(keyAdminErrorMessage(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the admin API's answer: %w", err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("admin API answered %s: %s", resp.Status, keyAdminErrorMessage(string(bytes.TrimSpace(raw))))
	}
	return raw, nil
}

func runKeysCreate(cmd *cobra.Command, _ []string) error {
	f := cmd.Flags()
	org, _ := f.GetString("org")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	req := keyRequest{Org: org}
	req.CreateOrg, _ = f.GetBool("create-org")
	req.Name, _ = f.GetString("name")
	req.Admin, _ = f.GetBool("admin")
	req.ExpiresIn, _ = f.GetString("expires")
	day, _ := f.GetFloat64("budget-day")
	month, _ := f.GetFloat64("budget-month")
	if day < 0 || month < 0 {
		return fmt.Errorf("--budget-day and --budget-month must not be negative")
	}
	if day > 0 || month > 0 {
		req.Budget = &reliability.KeyBudget{DayUSD: day, MonthUSD: month}
	}
	req.Models, _ = f.GetStringSlice("models")
	raw, err := adminRequest(cmd, http.MethodPost, "/llm/keys", req, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("creating a key for org %q: %w", org, err)
	}
	var out keyAnswer
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out.Key)
	fmt.Fprintf(cmd.ErrOrStderr(), "key %s for org %s (%s); it is shown only this once\n", out.ID, out.Org, out.OrgID)
	return nil
}

func runKeysList(cmd *cobra.Command, _ []string) error {
	org, _ := cmd.Flags().GetString("org")
	asJSON, _ := cmd.Flags().GetBool("json")
	if org == "" {
		return fmt.Errorf("--org is required")
	}
	var keys []reliability.KeyInfo
	cursor := ""
	for {
		q := url.Values{"org": {org}, "limit": {strconv.Itoa(reliability.MaxPageLimit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		raw, err := adminRequest(cmd, http.MethodGet, "/llm/keys?"+q.Encode(), nil, http.StatusOK)
		if err != nil {
			return fmt.Errorf("listing the keys of org %q: %w", org, err)
		}
		var page reliability.Page[reliability.KeyInfo]
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("decoding the answer: %w", err)
		}
		keys = append(keys, page.Data...)
		if !page.HasMore || page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	out := cmd.OutOrStdout()
	if asJSON {
		for _, k := range keys {
			b, _ := json.Marshal(k)
			fmt.Fprintf(out, "%s\n", b)
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tHINT\tSTATE\tSOURCE\tCREATED\tLAST USED\tEXPIRES\tADMIN\tBUDGET\tMODELS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, keyCellText(k.Name), keyCellText(k.Hint), k.State, k.Source,
			keyCellTime(k.CreatedAt), keyCellTime(k.LastUsedAt), keyCellTime(k.ExpiresAt), keyCellBool(k.Admin), keyBudgetText(k), keyCellText(strings.Join(k.Models, ",")))
	}
	return tw.Flush()
}

func runKeysRevoke(cmd *cobra.Command, args []string) error {
	raw, err := adminRequest(cmd, http.MethodDelete, "/llm/keys/"+url.PathEscape(args[0]), nil, http.StatusOK)
	if err != nil {
		return fmt.Errorf("revoking key %s: %w", args[0], err)
	}
	var out keyAnswer
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "revoked key %s (%s) of org %s at %s\n", out.ID, keyCellText(out.Hint), out.Org, keyCellTime(out.RevokedAt))
	return nil
}

func runKeysRotate(cmd *cobra.Command, args []string) error {
	raw, err := adminRequest(cmd, http.MethodPost, "/llm/keys/"+url.PathEscape(args[0])+"/rotate", nil, http.StatusOK)
	if err != nil {
		return fmt.Errorf("rotating key %s: %w", args[0], err)
	}
	var out keyAnswer
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out.Key)
	fmt.Fprintf(cmd.ErrOrStderr(), "new secret for key %s of org %s; it is shown only this once, and the old one no longer works\n", out.ID, out.Org)
	return nil
}

// keyCellText is s, or "-" when s is empty.
func keyCellText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// keyCellTime formats a time of a key for the table.
func keyCellTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// keyCellBool is "yes" or "no".
func keyCellBool(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// keyBudgetText shows a key's budget and what it spent, e.g.
// "1.25/5 day, 3/50 month" (spent/cap USD).
func keyBudgetText(k reliability.KeyInfo) string {
	if k.Budget == nil {
		return "-"
	}
	var spent reliability.KeySpent
	if k.Spent != nil {
		spent = *k.Spent
	}
	var parts []string
	if k.Budget.DayUSD > 0 {
		parts = append(parts, fmt.Sprintf("%s/%s day", keyCellUSD(spent.DayUSD), keyCellUSD(k.Budget.DayUSD)))
	}
	if k.Budget.MonthUSD > 0 {
		parts = append(parts, fmt.Sprintf("%s/%s month", keyCellUSD(spent.MonthUSD), keyCellUSD(k.Budget.MonthUSD)))
	}
	return strings.Join(parts, ", ")
}

// keyCellUSD formats USD without trailing zeros.
func keyCellUSD(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
