package cmd

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHugeRepeatStreamsAndStopsOnSIGTERM runs a real digest eval asking
// one item a hundred million times: its repeats are sent as they are made,
// so answers are stored within moments, and a SIGTERM stops the run with
// exit 130 and what it stored kept (before, the repeats were all made in
// memory first, and the signal went unheard while they were).
func TestHugeRepeatStreamsAndStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	dir := t.TempDir()
	data, db := filepath.Join(dir, "qa.jsonl"), filepath.Join(dir, "digest.db")
	if err := os.WriteFile(data, []byte(`{"prompt": "What is 2 + 2?", "expected": "4"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--db", db, "eval", data, "--models", "offline", "--repeat", "100000000", "-o", filepath.Join(dir, "out.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stored := 0
	for deadline := time.Now().Add(time.Minute); stored == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no result stored within a minute of --repeat 100000000: the repeats are not streamed\n%s", stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before the signal: %v\n%s", err, stderr.String())
		default:
		}
		stored = storedResults(db)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("still running a minute after SIGTERM\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	if n := storedResults(db); n < stored {
		t.Errorf("%d results after the signal, %d before: stored work was lost", n, stored)
	}
}

// storedResults counts a live run's stored results; 0 while the database
// is being made, or busy.
func storedResults(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(1000)")
	if err != nil {
		return 0
	}
	defer db.Close()
	n := 0
	if db.QueryRow("SELECT COUNT(*) FROM eval_run_results").Scan(&n) != nil {
		return 0
	}
	return n
}
