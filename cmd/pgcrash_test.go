package cmd

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// crashUnder starts cmd, crashes the PostgreSQL server once the provider
// has had 10 requests, and checks that cmd then exits 1; errOut gets its
// standard error.
func crashUnder(t *testing.T, cmd *exec.Cmd, errOut *bytes.Buffer, srv *fakeprovider.Server, pg *pgtest.Server) {
	t.Helper()
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for srv.Stats().Requests < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	pg.Crash(t)
	err := cmd.Wait()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1: %s", err, errOut.String())
	}
}
