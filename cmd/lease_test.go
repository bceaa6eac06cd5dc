package cmd

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// forEachDatabase runs test where processes share a cache: an SQLite file, and
// a PostgreSQL database of its own when a server is given
// (DIGEST_TEST_POSTGRES; required in CI).
func forEachDatabase(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "shared.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.FreshDatabase(t)) })
}

// evalItems is a dataset of n arithmetic items, each a distinct request.
func evalItems(t *testing.T, n int) string {
	t.Helper()
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"id": "q%d", "prompt": "q%d: what is %d + 1?", "expected": "%d", "assert": [{"type": "includes"}]}`, i, i, i, i+1)
	}
	return writeDataset(t, lines...)
}

// TestTwoEvalProcessesPayEachKeyOnce runs two real digest eval processes on
// the same dataset and database at the same time: between them every
// request key is paid for once, and each prints the whole report.
func TestTwoEvalProcessesPayEachKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	forEachDatabase(t, func(t *testing.T, db string) { twoEvalProcessesPayEachKeyOnce(t, bin, db) })
}

func twoEvalProcessesPayEachKeyOnce(t *testing.T, bin, db string) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 30 * time.Millisecond})
	const items = 40
	data := evalItems(t, items)
	outs := runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--concurrency", "2", "-f", "jsonl")
	cached := 0
	for i := range 2 {
		seen := map[string]int{}
		for line := range strings.Lines(outs[i]) {
			var r struct {
				Item   string `json:"item"`
				Pass   bool   `json:"pass"`
				Cached bool   `json:"cached"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("process %d printed %q: %v", i, line, err)
			}
			seen[r.Item]++
			if r.Cached {
				cached++
			}
		}
		if len(seen) != items {
			t.Errorf("process %d reported %d items, want %d", i, len(seen), items)
		}
		for item, n := range seen {
			if n != 1 {
				t.Errorf("process %d reported %s %d times", i, item, n)
			}
		}
	}
	if n := srv.Stats().Requests; n != items {
		t.Errorf("%d requests between the two processes, want %d: one per key", n, items)
	}
	if cached != items {
		t.Errorf("%d results read from the other process's work, want %d (each key paid by one, read by the other)", cached, items)
	}
}

// Eval waits out the live lease of a process on another machine, then does
// the work itself, and takes over at once the leases of a dead process of
// this machine: neither is paid twice nor blocks the run for good.
func TestEvalTakesOverExpiredAndDeadLeases(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	data := evalItems(t, 6)
	args := []string{"eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(), "-f", "jsonl"}
	first := newHarness(t)
	first.env["OPENAI_API_KEY"] = "k"
	if res := first.run(context.Background(), args...); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	keys := evalKeys(t, first.db)

	// The same requests on a second database whose keys are claimed: half
	// by a live process elsewhere, for a moment; half by a dead one here,
	// for an hour.
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	ctx := context.Background()
	st, err := sqlite.Open(ctx, h.db)
	if err != nil {
		t.Fatal(err)
	}
	host := lease.Machine()
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadOwner := fmt.Sprintf("%s/%d/dead", host, dead.ProcessState.Pid())
	for i, k := range keys {
		owner, ttl := "elsewhere/1/ab12", 300*time.Millisecond
		if i%2 == 1 {
			owner, ttl = deadOwner, time.Hour
		}
		if ok, err := st.Claim(ctx, k, owner, ttl); !ok || err != nil {
			t.Fatalf("claim: %v, %v", ok, err)
		}
	}
	st.Close()
	before := srv.Stats().Requests
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // an hour-long lease waited out would end here
	defer cancel()
	res := h.run(ctx, append(args, "--lease", "1s")...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if n := srv.Stats().Requests - before; n != len(keys) {
		t.Errorf("%d requests for %d keys whose claimants died, want one each", n, len(keys))
	}
	if left := leaseCount(t, h.db); left != 0 {
		t.Errorf("%d leases left after the run, want none", left)
	}
}

// evalKeys is the request keys stored in a database.
func evalKeys(t *testing.T, path string) []string {
	t.Helper()
	var keys []string
	queryDB(t, path, "SELECT key FROM eval_results ORDER BY key", func(rows *sql.Rows) error {
		var k string
		keys = append(keys, k)
		return rows.Scan(&keys[len(keys)-1])
	})
	return keys
}

func leaseCount(t *testing.T, path string) int {
	t.Helper()
	n := 0
	queryDB(t, path, "SELECT count(*) FROM leases", func(rows *sql.Rows) error { return rows.Scan(&n) })
	return n
}

// queryDB reads a digest database directly, through the SQLite driver.
func queryDB(t *testing.T, path, query string, row func(*sql.Rows) error) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// runTogether runs two digest processes with the same arguments at once,
// as two CI jobs would, and returns what each printed. Either failing fails
// the test.
func runTogether(t *testing.T, bin string, args ...string) [2]string {
	t.Helper()
	return runBoth(t, bin, nil, args...)
}

// runBoth is runTogether starting the second process once beforeSecond,
// unless nil, returns.
func runBoth(t *testing.T, bin string, beforeSecond func(), args ...string) [2]string {
	t.Helper()
	var wg sync.WaitGroup
	var outs, stderrs [2]bytes.Buffer
	var errs [2]error
	for i := range 2 {
		if i == 1 && beforeSecond != nil {
			beforeSecond()
		}
		wg.Go(func() {
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
			cmd.Stdout, cmd.Stderr = &outs[i], &stderrs[i]
			errs[i] = cmd.Run()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v: %s", i, err, stderrs[i].String())
		}
	}
	return [2]string{outs[0].String(), outs[1].String()}
}

// TestTwoEvalProcessesAskTheJudgeOnce: two real processes judging the same
// answers at once ask the grading model once per verdict between them:
// verdicts are claimed like answers.
func TestTwoEvalProcessesAskTheJudgeOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	forEachDatabase(t, func(t *testing.T, db string) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond, Answer: func(r fakeprovider.Received) string {
			if strings.HasSuffix(r.Model, "grader") {
				time.Sleep(20 * time.Millisecond)
				return "PASS\nA greeting."
			}
			return "Good morning"
		}})
		const items = 24
		lines := make([]string, items)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"id": "g%d", "prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`, i, i)
		}
		data := writeDataset(t, lines...)
		t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL()) // where the judge is served from
		// The answers are stored first (graded by another judge), so that
		// both processes come to the same verdicts at the same moments.
		runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--judge", "openai:first-grader", "-f", "jsonl")
		before := len(srv.Requests())
		outs := runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--judge", "openai:grader",
			"--concurrency", "2", "-f", "jsonl")
		for i := range 2 {
			if n := strings.Count(outs[i], `"pass":true`); n != items {
				t.Errorf("process %d: %d passing results, want %d", i, n, items)
			}
		}
		var answers, verdicts int
		for _, r := range srv.Requests()[before:] {
			if r.Model == "grader" {
				verdicts++
			} else {
				answers++
			}
		}
		if answers != 0 || verdicts != items {
			t.Errorf("%d answers and %d verdicts paid between two processes, want the %d verdicts once each and no answer again", answers, verdicts, items)
		}
	})
}
