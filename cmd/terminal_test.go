package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// onATerminal runs the real binary with standard error on a pseudo
// terminal (standard output to a file) and returns what the terminal
// showed and what went to the file.
func onATerminal(t *testing.T, env []string, args ...string) (shown, out string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo terminal here: %v", err)
	}
	defer ptmx.Close()
	outFile := filepath.Join(t.TempDir(), "out")
	stdout, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd := exec.Command(buildDigest(t), args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = stdout, tty, append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; EOF (EIO) comes when the child exits
	var b bytes.Buffer
	if _, err := io.Copy(&b, ptmx); err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), string(data)
}

// TestProgressOnARealTerminal: with standard error on a terminal, the
// progress bar counts in each command's unit against the total it knows
// (an eval's results: items x models; a summarize's commits), and the
// data on standard output is left whole. Piped, nothing is drawn
// (TestProgressDrawsOnlyOnATerminal in iostreams). The model answers in
// 40 ms, one call at a time, so that the bar is drawn before it is done.
func TestProgressOnARealTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{Latency: 40 * time.Millisecond})
	env := []string{"OPENAI_API_KEY=sk-tty-test", "OPENAI_BASE_URL=" + srv.OpenAIBaseURL()}
	db := filepath.Join(t.TempDir(), "digest.db")
	var data strings.Builder
	for i := range 20 {
		fmt.Fprintf(&data, `{"id": "q%d", "prompt": "Say %d", "expected": "%d"}`+"\n", i, i, i)
	}
	dataset := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(dataset, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shown, out := onATerminal(t, env, "--db", db, "eval", dataset, "--models", "openai:m", "-j", "1", "-f", "json")
	if !strings.Contains(shown, "\r") || !strings.Contains(shown, "evaluating") || !regexp.MustCompile(`\([1-9][0-9]*/20, `).MatchString(shown) ||
		!strings.Contains(shown, "results/") || strings.Contains(shown, "commits") {
		t.Errorf("the terminal showed no progress in results against the total:\n%q", shown)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Errorf("standard output is not the JSON report: %v\n%s", err, out)
	}

	shown, out = onATerminal(t, env, "--db", db, "summarize", historyOf(t, 12), "--model", "openai:m", "--batch-size", "1", "-j", "1", "-f", "jsonl")
	if !strings.Contains(shown, "\r") || !strings.Contains(shown, "summarizing") || !regexp.MustCompile(`\([1-9][0-9]*/12, `).MatchString(shown) || !strings.Contains(shown, "commits/") {
		t.Errorf("the terminal showed no progress in commits:\n%q", shown)
	}
	if n := strings.Count(out, "\n"); n != 12 {
		t.Errorf("%d lines of data on standard output, want 12:\n%s", n, out)
	}
}
