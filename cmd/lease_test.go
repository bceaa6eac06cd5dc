package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestTwoProcessesPayEachCommitOnce runs two real digest processes on the
// same repository and database at the same time: between them every commit
// is paid for once, and each prints the whole changelog.
func TestTwoProcessesPayEachCommitOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 40 * time.Millisecond})
	f := fixture(t)
	db := filepath.Join(t.TempDir(), "shared.db")
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			cmd := exec.Command(bin, "--db", db, "summarize", f.Dir, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
				"--batch-size", "1", "--concurrency", "2", "-f", "jsonl")
			cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
			cmd.Stdout = &outs[i]
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = err
				t.Logf("process %d: %s", i, stderr.String())
			}
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		if n := strings.Count(outs[i].String(), "\n"); n != 8 {
			t.Errorf("process %d printed %d commits, want 8", i, n)
		}
	}
	if n := srv.Stats().Requests; n != 8 {
		t.Errorf("%d requests between the two processes, want 8: one per commit", n)
	}
	if cached := strings.Count(outs[0].String()+outs[1].String(), `"cached":true`); cached != 8 {
		t.Errorf("%d entries read from the other process's work, want 8 (each commit paid by one, read by the other)", cached)
	}
}
