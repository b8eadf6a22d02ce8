// Package cmdutil holds what the benchmark commands share: reserving
// loopback ports for the processes they start, and running under a
// context that Ctrl-C cancels before writing a text or JSON report.
package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
)

// FreePorts reserves n distinct loopback ports by listening on port 0 and
// releasing them together; holding all listeners until the end keeps the
// kernel from handing the same port out twice.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Run calls run with a context that Ctrl-C or SIGTERM cancels, and writes
// its report with print: to stdout, or with asJSON to stderr while the
// report's JSON goes to stdout. A failure is printed under name and the
// process exits with status 1. The signal context stays registered until
// run has returned, so that a second Ctrl-C cannot kill the command before
// the processes it started are stopped.
func Run[R any](name string, asJSON bool, run func(context.Context) (R, error), print func(io.Writer, R)) R {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	rep, err := run(ctx)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		Fail(name, err)
	}
	if !asJSON {
		print(os.Stdout, rep)
		return rep
	}
	print(os.Stderr, rep)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		Fail(name, err)
	}
	return rep
}

// Fail prints err under the command's name and exits with status 1.
func Fail(name string, err error) {
	fmt.Fprintln(os.Stderr, name+":", err)
	os.Exit(1)
}
