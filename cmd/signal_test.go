package cmd

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
)

// buildDigest compiles the real binary once per test run.
func buildDigest(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "digest-test-bin")
		if err != nil {
			built.err = err
			return
		}
		built.dir, built.bin = dir, filepath.Join(dir, "digest")
		if out, err := exec.Command("go", "build", "-o", built.bin, "..").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// built is the binary the process-level tests share: one build per test
// run, not one per test (each costs seconds on a small machine).
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// TestMain removes the shared binary; the test wrapper exits with m.Run's code.
func TestMain(m *testing.M) {
	m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// TestSIGINTStoresFinishedWorkAndExits130 runs the real binary, interrupts
// it after its first summary has been stored, and checks the promise of
// exit code 130: what finished is kept, and a rerun pays only for the rest.
func TestSIGINTStoresFinishedWorkAndExits130(t *testing.T) {
	signalMidRun(t, syscall.SIGINT)
}

// signalMidRun sends sig to a real digest summarize once its first summary
// is stored, and checks that the run stopped as an interrupt: exit 130, a
// last line saying what was kept, no claim left behind, some but not all
// summaries stored, and a rerun that pays only for the rest.
func signalMidRun(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	r := gittest.New(t)
	const commits = 300
	var body strings.Builder
	for i := range commits {
		fmt.Fprintf(&body, "line %d of a file that keeps growing, so every diff has some weight\n", i)
		r.Write("log.txt", body.String()).Commit(fmt.Sprintf("Change %d", i))
	}
	db := filepath.Join(t.TempDir(), "digest.db")

	cmd := exec.Command(bin, "--db", db, "--verbose", "summarize", r.Dir, "--concurrency", "1", "--batch-size", "1")
	seen, err := signalAfterFirstSummary(t, cmd, sig)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, strings.Join(seen[max(0, len(seen)-5):], "\n"))
	}
	if last := seen[len(seen)-1]; !strings.HasPrefix(last, "digest: interrupted after ") {
		t.Errorf("last stderr line %q, want it to say digest was interrupted and what it kept", last)
	}
	if n := leaseCount(t, db); n != 0 {
		t.Errorf("%d claims left behind", n)
	}
	stored := countSummaries(t, db)
	if stored < 1 || stored >= commits {
		t.Fatalf("%d summaries stored after the signal, want some but not all %d", stored, commits)
	}
	out, err := exec.Command(bin, "--db", db, "summarize", r.Dir, "-f", "jsonl").CombinedOutput()
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("%d commits seen, %d cached, %d summarized", commits, stored, commits-stored); !strings.Contains(string(out), want) {
		t.Errorf("rerun should pay only for what the interrupted run did not store (%s):\n%s", want, out[max(0, len(out)-300):])
	}
}

// signalAfterFirstSummary starts a --verbose digest summarize, sends it
// sig once its first summary is stored, and returns the lines it wrote on
// standard error and how it ended.
func signalAfterFirstSummary(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) ([]string, error) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), "msg=summarized") {
			break
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	return seen, cmd.Wait()
}

func countSummaries(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM summaries").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInterruptAwaitsTheAnswersInFlight: SIGINT while requests to a hosted
// model are in flight. Those requests are paid for whether or not digest
// waits, so it waits for them (up to engine.DefaultGrace) and stores their
// answers: no request is cut off, and the rerun sends each remaining
// commit once, so every commit is paid for exactly once.
func TestInterruptAwaitsTheAnswersInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Latency: 300 * time.Millisecond})
	const commits = 40
	repo := historyOf(t, commits)
	db := filepath.Join(t.TempDir(), "digest.db")
	args := []string{"--db", db, "--verbose", "summarize", repo, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-size", "1", "--concurrency", "4", "-f", "jsonl"}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-interrupt-test")
	seen, err := signalAfterFirstSummary(t, cmd, syscall.SIGINT)
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130:\n%s", err, strings.Join(seen, "\n"))
	}
	st := srv.Stats()
	if st.Canceled != 0 {
		t.Errorf("%d requests cut off by the interrupt, paid for and lost", st.Canceled)
	}
	if stored := countSummaries(t, db); stored != st.Succeeded || stored >= commits {
		t.Errorf("%d summaries stored of %d answers received, want all of them and not every commit", stored, st.Succeeded)
	}
	if !strings.Contains(strings.Join(seen, "\n"), "awaiting the answers in flight") {
		t.Errorf("no line told that answers in flight were awaited:\n%s", strings.Join(seen, "\n"))
	}
	rerun := exec.Command(bin, args...)
	rerun.Env = cmd.Env
	if out, err := rerun.CombinedOutput(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	if st := srv.Stats(); st.Succeeded != commits || st.Requests != commits {
		t.Errorf("%d answers over %d requests for %d commits, want each commit paid once", st.Succeeded, st.Requests, commits)
	}
}
