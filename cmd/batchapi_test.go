package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
)

// batchEnv is the environment that points digest at a provider's (openai
// or anthropic) batch API on a fake server.
func batchEnv(s *fakeprovider.Server, provider string) map[string]string {
	if provider == "anthropic" {
		return map[string]string{"ANTHROPIC_BASE_URL": s.AnthropicBaseURL(), "ANTHROPIC_API_KEY": "sk-ant-test-batch"}
	}
	return map[string]string{"OPENAI_BASE_URL": s.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test-batch"}
}

// historyRepo is a repository of n commits, each changing one of 7 files.
func historyRepo(t *testing.T, n int) *gittest.Repo {
	r := gittest.New(t)
	for i := range n {
		r.Write(fmt.Sprintf("f%d.txt", i%7), fmt.Sprintf("line %d\n", i)).Commit(fmt.Sprintf("Change %d", i))
	}
	return r
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

// listed is what `digest batches --format json` lists, with flags.
func listed(t *testing.T, h *harness, flags ...string) []map[string]any {
	t.Helper()
	list := h.run(context.Background(), append([]string{"batches", "--format", "json"}, flags...)...)
	var batches []map[string]any
	if err := json.Unmarshal([]byte(list.out), &batches); err != nil || list.code != 0 {
		t.Fatalf("digest batches: exit %d, %v: %s %s", list.code, err, list.out, list.errOut)
	}
	return batches
}

// TestNoWaitThenCollect: --no-wait submits and exits 0 saying how to
// collect; digest batches shows the batch pending; the same command again
// collects it without a second batch, and the batch is then done.
func TestNoWaitThenCollect(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: "sk-test-batch", BatchAPI: fakeprovider.BatchAPIConfig{Processing: 400 * time.Millisecond}})
	h := newHarness(t)
	h.raw, h.env = true, batchEnv(srv, "openai")
	repo := historyRepo(t, 10)
	args := []string{"summarize", repo.Dir, "--model", "openai:gpt-4o-mini", "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
	res := h.run(context.Background(), append(args, "--no-wait")...)
	if res.code != 0 || res.out != "" || !strings.Contains(res.errOut, "10 commits wait in the providers' batches; run the same command again") {
		t.Fatalf("--no-wait: exit %d, out %q:\n%s", res.code, res.out, res.errOut)
	}
	if batches := listed(t, h); len(batches) != 1 || batches[0]["status"] != "in_progress" || batches[0]["items"] != float64(2) {
		t.Fatalf("digest batches after --no-wait: %v", batches)
	}
	// Without a key the provider cannot be asked: the batch is listed as
	// last seen, and the command says so and fails.
	env := h.env
	h.env = map[string]string{"OPENAI_BASE_URL": env["OPENAI_BASE_URL"]}
	list := h.run(context.Background(), "batches", "--refresh", "--format", "json")
	if list.code != 1 || !strings.Contains(list.out, `"in_progress"`) || !strings.Contains(list.errOut, "could not ask the provider") ||
		!strings.Contains(list.errOut, "1 of the batches listed could not be refreshed") {
		t.Errorf("digest batches --refresh without a key: exit %d, %s %s", list.code, list.out, list.errOut)
	}
	h.env = env
	// --refresh asks the provider: the batch is seen to end before the
	// command that sent it runs again, and nothing is collected by looking.
	var batches []map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if batches = listed(t, h, "--refresh"); len(batches) != 1 {
			t.Fatalf("digest batches --refresh: %v", batches)
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
	cost := func(args ...string) float64 {
		res := h.run(context.Background(), append(args, "--dry-run", "-f", "json")...)
		var doc struct {
			CostUSD float64 `json:"cost_usd"` // summarize's
			Models  []struct {
				CostUSD float64 `json:"cost_usd"`
			} `json:"models"` // eval's
		}
		if err := json.Unmarshal([]byte(res.out), &doc); err != nil || len(doc.Models) > 1 {
			t.Fatalf("dry run: %v %q %s", err, res.out, res.errOut)
		}
		for _, m := range doc.Models {
			doc.CostUSD += m.CostUSD
		}
		return doc.CostUSD
	}
	for _, args := range [][]string{
		{"summarize", historyRepo(t, 30).Dir, "--model", "openai:gpt-4o"},
		{"eval", evalItems(t, 10), "--models", "anthropic:claude-haiku-4-5"},
	} {
		sync, batch := cost(args...), cost(append(args, "--batch-api")...)
		if diff := batch - sync/2; sync == 0 || diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s dry run: $%.6f synchronous, $%.6f through the batch API; want half", args[0], sync, batch)
		}
	}
}

// TestBatchAPIRefusals: models and servers without a batch API are refused
// before anything is sent, each in one line naming --batch-api.
func TestBatchAPIRefusals(t *testing.T) {
	noBatches := fakeprovider.Start(t, fakeprovider.Config{})
	h := newHarness(t)
	repo := historyRepo(t, 2)
	h.raw, h.env = true, map[string]string{"OPENAI_API_KEY": "k"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"summarize", repo.Dir, "--model", "offline", "--batch-api"}, "offline has no batch API: --batch-api is for openai: and anthropic: models"},
		{[]string{"eval", evalItems(t, 2), "--models", "ollama:llama3", "--batch-api"}, "ollama:llama3 has no batch API"},
		{[]string{"summarize", repo.Dir, "--no-wait"}, "--no-wait is for batch runs. Try: --batch-api --no-wait"},
		{[]string{"summarize", repo.Dir, "--model", "openai:gpt-4o-mini", "--batch-api", "--batch-retry", "later"}, `--batch-retry "later" is neither next nor sync`},
		{[]string{"summarize", repo.Dir, "--model", "openai:my-model", "--batch-api", "--base-url", noBatches.URL() + "/compat/v1"},
			"has no batch endpoints (HTTP 404 when listing batches). Try: without --batch-api"},
	} {
		res := h.run(context.Background(), tt.args...)
		if res.code == 0 || !strings.Contains(res.errOut, tt.want) || strings.Count(strings.TrimSpace(res.errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want one line with %q", tt.args, res.code, res.errOut, tt.want)
		}
	}
	if st := noBatches.Stats(); st.Succeeded+st.BatchesCreated != 0 {
		t.Errorf("a refused run sent requests: %+v", st)
	}
}

// TestBatchOfAnotherKeyIsNotPaidTwice: a --no-wait run submits its batch
// under key A; the same command with key B, of another OpenAI project or
// Anthropic workspace, gets the provider's 404 looking at it. The batch
// may still run and bill under A, so B's run warns with the key hint,
// sends nothing for its items and exits 1; `digest batches` lists it as
// unknown, --refresh with B decides the same way, cancel with B is the
// provider's 404 with the hint, and cancel with A stops it (cancel of an
// unknown batch is a usage error); batchrun's
// TestCancelledBatchIsCollectedAndTheRestSentAgain runs the command again.
// A --no-wait run with no result yet is not listed as a run.
func TestBatchOfAnotherKeyIsNotPaidTwice(t *testing.T) {
	for _, bp := range []struct{ name, model string }{{"openai", "openai:gpt-4o-mini"}, {"anthropic", "anthropic:claude-haiku-4-5"}} {
		t.Run(bp.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
			h := newHarness(t)
			h.raw, h.env = true, batchEnv(srv, bp.name)
			keyVar := strings.ToUpper(bp.name) + "_API_KEY"
			keyA := h.env[keyVar]
			ctx := context.Background()
			args := []string{"eval", evalItems(t, 6), "--models", bp.model, "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
			if res := h.run(ctx, append(args, "--no-wait")...); res.code != 0 || !strings.Contains(res.errOut, "6 results wait") {
				t.Fatalf("--no-wait with key A: exit %d: %s", res.code, res.errOut)
			}
			sent := srv.Stats()
			if runs := h.run(ctx, "runs", "list", "-f", "json"); strings.Contains(runs.out, `"id"`) {
				t.Errorf("a --no-wait run with no result is listed as a run: %s", runs.out)
			}

			h.env[keyVar] = "key-of-another-project"
			res := h.run(ctx, args...)
			if res.code != 1 {
				t.Errorf("the run with key B: exit %d, want 1:\n%s", res.code, res.errOut)
			}
			// batchrun.TestUnseenBatchIsNotSentAgain checks the warning's words.
			if !strings.Contains(res.errOut, "level=WARN") || !strings.Contains(res.errOut, "it may still run, and bill, under the key that sent it") {
				t.Errorf("the run with key B does not warn that the batch may still bill:\n%s", res.errOut)
			}
			if now := srv.Stats(); now.BatchesCreated != sent.BatchesCreated || now.BatchItems != sent.BatchItems || now.Succeeded != sent.Succeeded {
				t.Errorf("the run with key B sent %d batches, %d batch items, %d requests: it paid again",
					now.BatchesCreated-sent.BatchesCreated, now.BatchItems-sent.BatchItems, now.Succeeded-sent.Succeeded)
			}
			batches := listed(t, h)
			if len(batches) != 1 || batches[0]["status"] != "unknown" || batches[0]["collected"] != false {
				t.Fatalf("digest batches after the run with key B: %v", batches)
			}
			id := batches[0]["id"].(string)

			// --refresh with B decides what the 404 means as the run did.
			list := h.run(ctx, "batches", "--refresh", "--format", "json")
			if list.code != 1 || !strings.Contains(list.out, `"unknown"`) || !strings.Contains(list.errOut, "this API key cannot see it") ||
				!strings.Contains(list.errOut, "Try: the API key of the run that sent them") {
				t.Errorf("digest batches --refresh with key B: exit %d, %s %s", list.code, list.out, list.errOut)
			}
			if res := h.run(ctx, "batches", "cancel", id); res.code != 1 || !strings.Contains(res.errOut, "HTTP 404") || !strings.Contains(res.errOut, "that created the batch") {
				t.Errorf("digest batches cancel with key B: exit %d %s", res.code, res.errOut)
			}

			h.env[keyVar] = keyA
			if res := h.run(ctx, "batches", "cancel", id); res.code != 0 || !strings.Contains(res.errOut, "asked "+bp.name+" to cancel batch "+id) {
				t.Fatalf("digest batches cancel with key A: exit %d %s", res.code, res.errOut)
			}
			if res := h.run(ctx, "batches", "cancel", "no-such-batch"); res.code != 2 || !strings.Contains(res.errOut, `no batch "no-such-batch"`) {
				t.Errorf("cancel of an unknown batch: exit %d %s", res.code, res.errOut)
			}
		})
	}
}

// TestBatchRetryWords: --batch-retry takes next or sync, and unknown added
// to either (alone it is next,unknown); anything else is a usage error
// before anything is sent.
func TestBatchRetryWords(t *testing.T) {
	for _, c := range []struct {
		value         string
		sync, unknown bool
		err           string
	}{
		{"next", false, false, ""},
		{"sync", true, false, ""},
		{"unknown", false, true, ""},
		{"next,unknown", false, true, ""},
		{" sync , unknown ", true, true, ""},
		{"next,sync", false, false, `--batch-retry "next,sync" names both next and sync`},
		{"next,later", false, false, `"later" is not a word it takes`},
		{"", false, false, `"" is not a word it takes`},
	} {
		m, err := batchFlags{API: true, Poll: time.Second, Retry: c.value}.mode()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "Try: --batch-retry") || cmdutil.Code(err) != cmdutil.ExitUsage {
				t.Errorf("--batch-retry %q: %v, want a usage error saying %q", c.value, err, c.err)
			}
			continue
		}
		if err != nil || m.SyncRetry != c.sync || m.RetryUnknown != c.unknown {
			t.Errorf("--batch-retry %q: %+v, %v", c.value, m, err)
		}
	}
}
