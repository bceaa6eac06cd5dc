package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// A model held to a JSON schema never writes a malformed answer: against a
// fake that garbles one in three answers asked for without a schema, a
// history summarized by a model whose API takes none pays for the garbled
// batches again commit by commit, and one held to the schema pays for
// each batch once.
func TestSummarizeStructuredAnswersNeedNoSecondAsking(t *testing.T) {
	const commits, batch = 40, 4
	run := func(model string) (requests, code int) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Sloppy: 3})
		h := newHarness(t)
		h.env = map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test-structured"}
		repo := historyRepo(t, commits)
		// A long window: every batch fills, however loaded the machine.
		res := h.run(context.Background(), "summarize", repo.Dir, "--model", model, "--batch-size", "4", "--batch-window", "5s",
			"--concurrency", "1", "--rpm", "100000", "--tpm", "100000000", "-f", "jsonl")
		return len(srv.Requests()), res.code
	}
	// qwen2.5 is not an OpenAI model: asked without a schema, parsed as it comes.
	freeRequests, freeCode := run("openai:qwen2.5")
	heldRequests, heldCode := run("openai:gpt-4o-mini")
	t.Logf("%d commits in batches of %d: without a schema %d requests (exit %d); held to one %d (exit %d)",
		commits, batch, freeRequests, freeCode, heldRequests, heldCode)
	if heldCode != 0 || heldRequests != commits/batch {
		t.Errorf("held to the schema: %d requests, exit %d; want %d, exit 0", heldRequests, heldCode, commits/batch)
	}
	if freeRequests <= commits/batch {
		t.Errorf("without a schema: %d requests; the garbled answers should have been asked again", freeRequests)
	}
}
