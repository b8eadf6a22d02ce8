package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// handleBackup answers GET /llm/backup with a consistent copy of the store,
// written from one read transaction while the gateway keeps serving (see
// reliability.BoltStore.Backup). Content-Length is the copy's size, so a
// client can tell a complete copy from a cut one.
func handleBackup(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method not allowed")}
	}
	a, err := runningApp()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err}
	}
	st := a.storeOrNil()
	started := false
	n, err := st.Backup(func(size int64) io.Writer {
		started = true
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Content-Disposition", `attachment; filename="`+filepath.Base(a.storePath)+`"`)
		w.WriteHeader(http.StatusOK)
		return w
	})
	if err != nil {
		a.logger.Error("store backup failed", zap.Int64("bytes_written", n), zap.Error(err))
		if !started {
			return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("backing up the store: %v", err)}
		}
		// The status is out: cutting the connection short of
		// Content-Length tells the client the copy is incomplete.
		panic(http.ErrAbortHandler)
	}
	a.logger.Info("store backed up", zap.String("store", a.storePath), zap.Int64("bytes", n))
	return nil
}

// runBackup is `caddy llm backup`: it fetches the copy from the admin API
// into a temporary file next to the output, syncs it, and renames it into
// place only once it is complete.
func runBackup(cmd *cobra.Command, _ []string) error {
	out, _ := cmd.Flags().GetString("output")
	if out == "" {
		return errors.New("--output is required")
	}
	addr, err := adminAddress(cmd)
	if err != nil {
		return err
	}
	resp, err := caddycmd.AdminAPIRequest(addr, http.MethodGet, "/llm/backup", nil, nil)
	if err != nil {
		return fmt.Errorf("backing up: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("backing up: admin API answered %s: %s", resp.Status, msg)
	}
	n, err := writeFileAtomic(out, resp.Body, resp.ContentLength)
	if err != nil {
		return fmt.Errorf("backing up to %s: %w", out, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "store copied to %s (%d bytes)\n", out, n)
	return nil
}

// writeFileAtomic writes r to path through a temporary file in the same
// directory, which is synced and renamed over path only when exactly want
// bytes arrived (want < 0: whatever arrives).
func writeFileAtomic(path string, r io.Reader, want int64) (int64, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	n, err := io.Copy(tmp, r)
	if err == nil && want >= 0 && n != want {
		err = fmt.Errorf("the copy was cut off after %d of %d bytes", n, want)
	}
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return n, err
}
