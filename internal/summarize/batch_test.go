package summarize

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/spend"
	"github.com/digest-cli/digest/internal/target"
)

// TestBatchHoldsFewRequestsForABusyEngine: while the engine takes no
// request, batch stops taking prepared commits once a few requests wait, so
// that preparation waits too instead of holding a whole history's text.
func TestBatchHoldsFewRequestsForABusyEngine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &dispatcher{
		opts: Options{Concurrency: 2, BatchSize: 4, BatchTokens: 1 << 20,
			Target: target.Target{Spec: provider.Spec{Provider: "openai", Model: "custom"}}},
		byKey: map[string][]*pending{}, settled: make(chan []*pending), spend: spend.New(0),
	}
	prepared := make(chan *pending)
	tasks := make(chan engine.Task) // no engine reads it: every request waits
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.batch(ctx, prepared, tasks)
	}()
	repo := &repoRun{id: "r"}
	taken := 0
	for i := range 1000 {
		p := &pending{repo: repo, commit: history.Commit{Hash: fmt.Sprintf("%040d", i)}, tokens: 10,
			commitText: &commitText{sent: prompt.Commit{Hash: fmt.Sprint(i)}}}
		select {
		case prepared <- p:
			taken++
			continue
		case <-time.After(200 * time.Millisecond):
		}
		break
	}
	cancel()
	<-done
	// 2*Concurrency full requests of BatchSize commits wait, plus one batch
	// filling: anything near the 1000 offered means no bound.
	if limit := 2*2*4 + 4; taken > limit {
		t.Fatalf("batch took %d prepared commits with the engine busy, want at most %d", taken, limit)
	}
	if taken < 4 {
		t.Fatalf("batch took only %d commits", taken)
	}
}
