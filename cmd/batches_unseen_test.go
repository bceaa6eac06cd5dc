package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestBatchOfAnotherKeyIsNotPaidTwice: a --no-wait run submits its batch
// under key A; the same command with key B, of another OpenAI project or
// Anthropic workspace, gets the provider's 404 looking at it. The batch
// may still run and bill under A, so B's run warns with the key hint,
// sends nothing for its items and exits 1; `digest batches` lists it as
// unknown, --refresh with B decides the same way, cancel with B is the
// provider's 404 with the hint, and cancel with A stops it. The command
// run again with A collects it and sends the canceled items again.
func TestBatchOfAnotherKeyIsNotPaidTwice(t *testing.T) {
	for _, bp := range batchProviders {
		t.Run(bp.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
			h := newHarness(t)
			h.raw, h.env = true, bp.env(srv)
			keyVar := strings.ToUpper(bp.name) + "_API_KEY"
			keyA := h.env[keyVar]
			ctx := context.Background()
			args := []string{"eval", evalItems(t, 6), "--models", bp.model, "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
			if res := h.run(ctx, append(args, "--no-wait")...); res.code != 0 || !strings.Contains(res.errOut, "6 results wait") {
				t.Fatalf("--no-wait with key A: exit %d: %s", res.code, res.errOut)
			}
			sent := srv.Stats()

			h.env[keyVar] = "key-of-another-project"
			res := h.run(ctx, args...)
			if res.code != 1 {
				t.Errorf("the run with key B: exit %d, want 1:\n%s", res.code, res.errOut)
			}
			for _, want := range []string{"level=WARN", "cannot be seen with this API key", "HTTP 404", "it may still run, and bill, under the key that sent it",
				"Try: the API key of the run that sent it", "--batch-retry unknown"} {
				if !strings.Contains(res.errOut, want) {
					t.Errorf("the run with key B does not say %q:\n%s", want, res.errOut)
				}
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
			srv.SetBatchProcessing(0)
			res = h.run(ctx, args...)
			if res.code != 0 || len(entries(t, res.out)) != 6 {
				t.Fatalf("the run with key A after the cancel: exit %d, %d rows:\n%s", res.code, len(entries(t, res.out)), res.errOut)
			}
			if n := srv.Stats().BatchesCreated; n != sent.BatchesCreated+1 {
				t.Errorf("%d batches in all, want the canceled one and the one sending its items again", n)
			}
			if batches := listed(t, h); len(batches) != 0 {
				t.Errorf("left open: %v", batches)
			}
		})
	}
}

// listed is what `digest batches --format json` lists.
func listed(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	list := h.run(context.Background(), "batches", "--format", "json")
	var batches []map[string]any
	if err := json.Unmarshal([]byte(list.out), &batches); err != nil || list.code != 0 {
		t.Fatalf("digest batches: exit %d, %v: %s %s", list.code, err, list.out, list.errOut)
	}
	return batches
}

// TestSummarizeWithAnotherKeySendsNothingAgain: summarize meets a batch of
// another key as eval does: each commit it holds fails with the key hint,
// nothing is sent again, exit 1; with --batch-retry unknown the commits go
// out again in a batch of the new key's and are summarized.
func TestSummarizeWithAnotherKeySendsNothingAgain(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
	h := newHarness(t)
	h.raw, h.env = true, batchProviders[0].env(srv)
	repo := historyRepo(t, 5)
	args := []string{"summarize", repo.Dir, "--model", "openai:gpt-4o-mini", "--batch-api", "--batch-poll", "20ms", "-f", "jsonl"}
	if res := h.run(context.Background(), append(args, "--no-wait")...); res.code != 0 {
		t.Fatalf("--no-wait with key A: exit %d: %s", res.code, res.errOut)
	}
	sent := srv.Stats()
	h.env["OPENAI_API_KEY"] = "key-of-another-project"
	res := h.run(context.Background(), args...)
	if res.code != 1 || !strings.Contains(res.errOut, "cannot be seen with this API key") || strings.Count(res.out, `"commit"`) != 0 {
		t.Errorf("summarize with key B: exit %d, out %q:\n%s", res.code, res.out, res.errOut)
	}
	if now := srv.Stats(); now.BatchesCreated != sent.BatchesCreated || now.Succeeded != sent.Succeeded {
		t.Errorf("summarize with key B sent %d batches, %d requests", now.BatchesCreated-sent.BatchesCreated, now.Succeeded-sent.Succeeded)
	}
	srv.SetBatchProcessing(0)
	res = h.run(context.Background(), append(args, "--batch-retry", "unknown")...)
	if res.code != 0 || len(entries(t, res.out)) != 5 || !strings.Contains(res.errOut, "sending its requests again (--batch-retry unknown)") {
		t.Errorf("summarize with key B and --batch-retry unknown: exit %d, %d rows:\n%s", res.code, len(entries(t, res.out)), res.errOut)
	}
	if now := srv.Stats(); now.BatchesCreated != sent.BatchesCreated+1 {
		t.Errorf("%d batches sent with --batch-retry unknown, want 1", now.BatchesCreated-sent.BatchesCreated)
	}
	if batches := listed(t, h); len(batches) != 1 || batches[0]["status"] != "unknown" {
		t.Errorf("the unseen batch, paid twice now, should stay listed for a cancel with key A: %v", batches)
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
