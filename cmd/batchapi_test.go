package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
)

// batchProvider is a provider's batch API on a fake server, as digest's
// flags and environment reach it.
type batchProvider struct {
	name, model string
	env         func(*fakeprovider.Server) map[string]string
}

var batchProviders = []batchProvider{
	{"openai", "openai:gpt-4o-mini", func(s *fakeprovider.Server) map[string]string {
		return map[string]string{"OPENAI_BASE_URL": s.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test-batch"}
	}},
	{"anthropic", "anthropic:claude-haiku-4-5", func(s *fakeprovider.Server) map[string]string {
		return map[string]string{"ANTHROPIC_BASE_URL": s.AnthropicBaseURL(), "ANTHROPIC_API_KEY": "sk-ant-test-batch"}
	}},
}

// historyRepo is a repository of n commits, each changing one of 7 files.
func historyRepo(t *testing.T, n int) *gittest.Repo {
	r := gittest.New(t)
	for i := range n {
		r.Write(fmt.Sprintf("f%d.txt", i%7), fmt.Sprintf("line %d\n", i)).Commit(fmt.Sprintf("Change %d", i))
	}
	return r
}

// TestNoWaitThenCollect: --no-wait submits and exits 0 saying how to
// collect; digest batches shows the batch pending; the same command again
// collects it without a second batch, and the batch is then done.
func TestNoWaitThenCollect(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: "sk-test-batch", BatchAPI: fakeprovider.BatchAPIConfig{Processing: 400 * time.Millisecond}})
	h := newHarness(t)
	h.raw, h.env = true, batchProviders[0].env(srv)
	repo := historyRepo(t, 10)
	args := []string{"summarize", repo.Dir, "--model", "openai:gpt-4o-mini", "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
	res := h.run(context.Background(), append(args, "--no-wait")...)
	if res.code != 0 || res.out != "" || !strings.Contains(res.errOut, "10 commits wait in the providers' batches; run the same command again") {
		t.Fatalf("--no-wait: exit %d, out %q:\n%s", res.code, res.out, res.errOut)
	}
	list := h.run(context.Background(), "batches", "--format", "json")
	var batches []map[string]any
	if err := json.Unmarshal([]byte(list.out), &batches); err != nil || len(batches) != 1 || batches[0]["status"] != "in_progress" || batches[0]["items"] != float64(2) {
		t.Fatalf("digest batches after --no-wait: %v %s %s", err, list.out, list.errOut)
	}
	// Without a key the provider cannot be asked: the batch is listed as
	// last seen, and the command says so and fails.
	env := h.env
	h.env = map[string]string{"OPENAI_BASE_URL": env["OPENAI_BASE_URL"]}
	list = h.run(context.Background(), "batches", "--refresh", "--format", "json")
	if list.code != 1 || !strings.Contains(list.out, `"in_progress"`) || !strings.Contains(list.errOut, "could not ask the provider") ||
		!strings.Contains(list.errOut, "1 of the batches listed could not be refreshed") {
		t.Errorf("digest batches --refresh without a key: exit %d, %s %s", list.code, list.out, list.errOut)
	}
	h.env = env
	// --refresh asks the provider: the batch is seen to end before the
	// command that sent it runs again, and nothing is collected by looking.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list = h.run(context.Background(), "batches", "--refresh", "--format", "json")
		batches = nil
		if err := json.Unmarshal([]byte(list.out), &batches); err != nil || list.code != 0 || len(batches) != 1 {
			t.Fatalf("digest batches --refresh: exit %d, %v %s %s", list.code, err, list.out, list.errOut)
		}
		if batches[0]["status"] == "ended" || time.Now().After(deadline) {
			break
		}
	}
	if b := batches[0]; b["status"] != "ended" || b["succeeded"] != float64(2) || b["collected"] != false {
		t.Errorf("digest batches --refresh once the batch ended: %v", b)
	}
	if list = h.run(context.Background(), "batches", "--format", "json"); !strings.Contains(list.out, `"ended"`) {
		t.Errorf("the refreshed state is not recorded: %s", list.out)
	}
	res = h.run(context.Background(), args...)
	if res.code != 0 || len(entries(t, res.out)) != 10 {
		t.Fatalf("collecting run: exit %d:\n%s", res.code, res.errOut)
	}
	if n := srv.Stats().BatchesCreated; n != 1 {
		t.Errorf("%d batches created, want the one --no-wait sent", n)
	}
	if list = h.run(context.Background(), "batches"); !strings.Contains(list.errOut, "no batches waiting") {
		t.Errorf("digest batches after collecting: %s %s", list.out, list.errOut)
	}
	if list = h.run(context.Background(), "batches", "--all"); !strings.Contains(list.out, "ended") || !strings.Contains(list.out, "true") {
		t.Errorf("digest batches --all: %s", list.out)
	}
}

// TestBatchAPIDryRunCostsHalf: a dry run through the batch API counts the
// batch price, half the synchronous one for a model priced both ways.
func TestBatchAPIDryRunCostsHalf(t *testing.T) {
	h := newHarness(t)
	repo := historyRepo(t, 30)
	cost := func(extra ...string) float64 {
		res := h.run(context.Background(), append([]string{"summarize", repo.Dir, "--model", "openai:gpt-4o", "--dry-run", "-f", "json"}, extra...)...)
		var doc struct {
			CostUSD float64 `json:"cost_usd"`
		}
		if err := json.Unmarshal([]byte(res.out), &doc); err != nil || doc.CostUSD == 0 {
			t.Fatalf("dry run: %v %q %s", err, res.out, res.errOut)
		}
		return doc.CostUSD
	}
	sync, batch := cost(), cost("--batch-api")
	if diff := batch - sync/2; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("dry run: $%.6f synchronous, $%.6f through the batch API; want half", sync, batch)
	}
	data := evalItems(t, 10)
	evalCost := func(extra ...string) float64 {
		res := h.run(context.Background(), append([]string{"eval", data, "--models", "anthropic:claude-haiku-4-5", "--dry-run", "-f", "json"}, extra...)...)
		var doc struct {
			Models []struct {
				CostUSD float64 `json:"cost_usd"`
			} `json:"models"`
		}
		if err := json.Unmarshal([]byte(res.out), &doc); err != nil || len(doc.Models) != 1 || doc.Models[0].CostUSD == 0 {
			t.Fatalf("eval dry run: %v %q %s", err, res.out, res.errOut)
		}
		return doc.Models[0].CostUSD
	}
	sync, batch = evalCost(), evalCost("--batch-api")
	if diff := batch - sync/2; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("eval dry run: $%.6f synchronous, $%.6f through the batch API; want half", sync, batch)
	}
}

// TestBatchAPIRefusals: models and servers without a batch API are refused
// before anything is sent, each in one line naming --batch-api.
func TestBatchAPIRefusals(t *testing.T) {
	noBatches := fakeprovider.Start(t, fakeprovider.Config{})
	h := newHarness(t)
	h.raw = true
	repo := historyRepo(t, 2)
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"summarize", repo.Dir, "--model", "offline", "--batch-api"}, nil, "offline has no batch API: --batch-api is for openai: and anthropic: models"},
		{[]string{"eval", evalItems(t, 2), "--models", "ollama:llama3", "--batch-api"}, nil, "ollama:llama3 has no batch API"},
		{[]string{"summarize", repo.Dir, "--no-wait"}, nil, "--no-wait is for batch runs. Try: --batch-api --no-wait"},
		{[]string{"summarize", repo.Dir, "--model", "openai:gpt-4o-mini", "--batch-api", "--batch-retry", "later"}, nil, `--batch-retry "later" is neither next nor sync`},
		{[]string{"summarize", repo.Dir, "--model", "openai:my-model", "--batch-api", "--base-url", noBatches.URL() + "/compat/v1"},
			map[string]string{"OPENAI_API_KEY": "k"}, "has no batch endpoints (HTTP 404 when listing batches). Try: without --batch-api"},
	} {
		h.env = tt.env
		res := h.run(context.Background(), tt.args...)
		if res.code == 0 || !strings.Contains(res.errOut, tt.want) || strings.Count(strings.TrimSpace(res.errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want one line with %q", tt.args, res.code, res.errOut, tt.want)
		}
	}
	if st := noBatches.Stats(); st.Succeeded+st.BatchesCreated != 0 {
		t.Errorf("a refused run sent requests: %+v", st)
	}
}

// TestBatchRunKilledWhilePolling: SIGKILL while digest waits for its batch,
// then the same command again: no second batch is created for the same
// requests, every result is collected, and the database is intact.
func TestBatchRunKilledWhilePolling(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	repo := historyRepo(t, 30)
	data := evalItems(t, 30)
	for _, tt := range []struct {
		name  string
		args  []string
		field string
		rows  string
	}{
		{"summarize", []string{"summarize", repo.Dir}, "commit", "SELECT COUNT(*) FROM summaries"},
		{"eval", []string{"eval", data, "--models"}, "item", "SELECT COUNT(*) FROM eval_run_results"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 3 * time.Second}})
			db := filepath.Join(t.TempDir(), "digest.db")
			args := append(append([]string{"--db", db}, tt.args...), "openai:m", "--base-url", srv.OpenAIBaseURL(), "--batch-api", "--batch-poll", "100ms", "-f", "jsonl")
			if tt.name == "summarize" {
				args = slices.Insert(args, len(tt.args)+2, "--model")
			}
			// The batch goes out a second after the last request is made;
			// the kill comes while it runs.
			if _, errOut, err := runDigest(bin, args, "sk-test", 2*time.Second); err == nil {
				t.Fatalf("the run ended before the kill: %s", errOut)
			}
			if n := srv.Stats().BatchesCreated; n != 1 {
				t.Fatalf("%d batches created before the kill, want 1 (kill too early or too late)", n)
			}
			checkIntegrity(t, db)
			out, errOut, err := runDigest(bin, args, "sk-test", 0)
			if err != nil {
				t.Fatalf("rerun: %v\n%s", err, errOut)
			}
			if n := len(reportedField(t, out, tt.field)); n != 30 {
				t.Errorf("rerun reported %d rows, want 30\n%s", n, errOut)
			}
			st := srv.Stats()
			if st.BatchesCreated != 1 || st.BatchItemsAnswered != st.BatchItems {
				t.Errorf("after the rerun: %d batches, %d items, %d answered; want the one batch", st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered)
			}
			checkIntegrity(t, db)
			if n := countRows(t, db, tt.rows); n != 30 {
				t.Errorf("%d rows stored, want 30", n)
			}
		})
	}
}

// TestCancelledBatchIsCollectedAndTheRestSentAgain: digest batches cancel
// stops a batch at the provider; the command that sent it, run again,
// collects it and sends what it had not answered in a new batch.
func TestCancelledBatchIsCollectedAndTheRestSentAgain(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 1500 * time.Millisecond}})
	h := newHarness(t)
	h.raw, h.env = true, batchProviders[1].env(srv)
	data := evalItems(t, 6)
	args := []string{"eval", data, "--models", "anthropic:claude-haiku-4-5", "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
	if res := h.run(context.Background(), append(args, "--no-wait")...); res.code != 0 || res.out != "" || !strings.Contains(res.errOut, "6 results wait") {
		t.Fatalf("--no-wait: exit %d, out %q: %s", res.code, res.out, res.errOut)
	}
	if runs := h.run(context.Background(), "runs", "list", "-f", "json"); strings.Contains(runs.out, `"id"`) {
		t.Errorf("a --no-wait run with no result is listed as a run: %s", runs.out)
	}
	list := h.run(context.Background(), "batches", "--format", "json")
	var batches []map[string]any
	if err := json.Unmarshal([]byte(list.out), &batches); err != nil || len(batches) != 1 {
		t.Fatalf("digest batches: %v %s", err, list.out)
	}
	if res := h.run(context.Background(), "batches", "cancel", batches[0]["id"].(string)); res.code != 0 || !strings.Contains(res.errOut, "asked anthropic to cancel") {
		t.Fatalf("cancel: exit %d %s", res.code, res.errOut)
	}
	if res := h.run(context.Background(), "batches", "cancel", "no-such-batch"); res.code != 2 || !strings.Contains(res.errOut, `no batch "no-such-batch"`) {
		t.Errorf("cancel of an unknown batch: exit %d %s", res.code, res.errOut)
	}
	res := h.run(context.Background(), args...)
	if res.code != 0 {
		t.Fatalf("collecting run: exit %d: %s", res.code, res.errOut)
	}
	if rows := entries(t, res.out); len(rows) != 6 {
		t.Errorf("%d rows after the cancel, want 6", len(rows))
	}
	if n := srv.Stats().BatchesCreated; n != 2 {
		t.Errorf("%d batches, want the canceled one and the one sending its items again", n)
	}
}
