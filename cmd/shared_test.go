package cmd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/pgtest"
)

// TestThreeMachinesShareOneCacheAndOneLimit is issue 13's whole promise on
// real processes: three digest summarize processes, two of them in UTS
// namespaces of their own with other host names (other machines, to their
// claims), summarize one 240-commit history at once through one PostgreSQL
// database, one API key, against a provider allowing 600 requests a minute
// (scaled to 10 a second), each told --rpm 600 (before the shared limit:
// 43% of requests answered 429, 79% of the limit used). Every commit is paid once,
// each process prints the whole changelog, and together they use the
// limit (>= 90%) without tripping it (<= 1% of requests answered 429),
// which processes pacing themselves each to the whole limit cannot do.
func TestThreeMachinesShareOneCacheAndOneLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the binary, and takes the 24 s the limit allows; its processes are not race-instrumented, so it runs once, without -race")
	}
	bin := buildDigest(t)
	db := pgtest.FreshDatabase(t)
	otherHosts := os.Geteuid() == 0 && exec.Command("unshare", "-u", "true").Run() == nil
	if !otherHosts {
		t.Log("not root or no unshare -u: the three processes share this host name")
	}
	const commits = 240
	srv := sharedProvider(t)
	repo := historyOf(t, commits)
	hosts := []string{"", "digest-test-machine-b", "digest-test-machine-c"}
	if !otherHosts {
		hosts = []string{"", "", ""}
	}
	outs := runSharing(t, bin, srv, db, []string{repo, repo, repo}, hosts)
	for i, out := range outs {
		if n := strings.Count(out, "\n"); n != commits {
			t.Errorf("process %d printed %d commits, want %d", i, n, commits)
		}
	}
	checkLimitUse(t, srv, commits)
}

// TestTwoRepositoriesOnOneMachineShareOneLimit: two processes on one
// machine summarize different histories into the one SQLite file, on one
// API key with --rpm 600 each: together they stay under the account's
// limit (<= 1% 429s) and use it (>= 90%).
func TestTwoRepositoriesOnOneMachineShareOneLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the binary, and takes the 20 s the limit allows; its processes are not race-instrumented, so it runs once, without -race")
	}
	bin := buildDigest(t)
	const commits = 100
	srv := sharedProvider(t)
	db := filepath.Join(t.TempDir(), "digest.db")
	outs := runSharing(t, bin, srv, db, []string{historyOf(t, commits), historyOf(t, commits)}, []string{"", ""})
	for i, out := range outs {
		if n := strings.Count(out, "\n"); n != commits {
			t.Errorf("process %d printed %d commits, want %d", i, n, commits)
		}
	}
	checkLimitUse(t, srv, 2*commits)
}

// onMachine runs args on this machine when host is "", else on another
// one to digest: in a UTS namespace of its own (unshare -u, as root), a
// shell renames its host, then becomes the command.
func onMachine(host string, args []string) *exec.Cmd {
	if host == "" {
		return exec.Command(args[0], args[1:]...)
	}
	return exec.Command("unshare", append([]string{"-u", "sh", "-c", `hostname "$0" && exec "$@"`, host}, args...)...)
}

// sharedRPS is the fake provider's limit: 600 requests a minute, scaled
// to a second. It sends no rate-limit headers, which speak per minute.
const sharedRPS = 10

// sharedWindow is the window the fake counts sharedRPS over. A provider
// counts over a minute, where a request sent a few hundred milliseconds
// late (a process starved of CPU between taking its turn and sending)
// changes nothing; over one second such a delay alone put two turns into
// one window and read as 13% of requests answered 429 on a loaded
// machine. Five seconds keep the test's pace and most of a minute's slack.
const sharedWindow = 5 * time.Second

func sharedProvider(t *testing.T) *fakeprovider.Server {
	perWindow := int(sharedRPS * sharedWindow / time.Second)
	return fakeprovider.Start(t, fakeprovider.Config{Window: sharedWindow, RPM: perWindow, RetryAfter: true, Latency: 20 * time.Millisecond})
}

// historyOf is a repository of n commits.
func historyOf(t *testing.T, n int) string {
	r := gittest.New(t)
	for i := range n {
		r.Write(fmt.Sprintf("f%d.txt", i%9), fmt.Sprintf("version %d of %s\n", i, r.Dir)).Commit(fmt.Sprint("change ", i))
	}
	return r.Dir
}

// runSharing runs one digest summarize per repository at once, each with
// --rpm 600 on one API key, on the machine named by hosts[i] ("" for this
// one), and returns what each printed.
func runSharing(t *testing.T, bin string, srv *fakeprovider.Server, db string, repos, hosts []string) []string {
	t.Helper()
	outs, errs := make([]bytes.Buffer, len(repos)), make([]bytes.Buffer, len(repos))
	fails := make([]error, len(repos))
	var wg sync.WaitGroup
	for i, repo := range repos {
		args := []string{bin, "--db", db, "summarize", repo, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
			"--rpm", fmt.Sprint(sharedRPS * 60), "--batch-size", "1", "--concurrency", "4", "-f", "jsonl"}
		cmd := onMachine(hosts[i], args)
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=one-account-key")
		cmd.Stdout, cmd.Stderr = &outs[i], &errs[i]
		wg.Go(func() { fails[i] = cmd.Run() })
	}
	wg.Wait()
	printed := make([]string, len(repos))
	for i := range repos {
		if fails[i] != nil {
			t.Fatalf("process %d: %v: %s", i, fails[i], errs[i].String())
		}
		printed[i] = outs[i].String()
	}
	return printed
}

// checkLimitUse checks that commits answers were paid, each once, that at
// most 1% of requests were answered 429, and that from the first admission
// to the last at least 90% of the limit was used, as the engine's LimitUse
// benchmark counts it.
func checkLimitUse(t *testing.T, srv *fakeprovider.Server, commits int) {
	t.Helper()
	st := srv.Stats()
	if st.Succeeded != commits {
		t.Errorf("%d answers paid for %d commits, want one each", st.Succeeded, commits)
	}
	if share := float64(st.RateLimited) / float64(st.Requests); share > 0.01 {
		t.Errorf("%d of %d requests answered 429 (%.1f%%), want at most 1%%", st.RateLimited, st.Requests, 100*share)
	}
	if used, _ := st.LimitUse(int(sharedRPS*sharedWindow/time.Second), 0, 0); used < 0.90 {
		t.Errorf("%d requests used %.0f%% of the limit, want at least 90%%", len(st.Admitted), 100*used)
	} else {
		t.Logf("%d requests: %.1f%% of the limit used, %d answered 429", len(st.Admitted), 100*used, st.RateLimited)
	}
}
