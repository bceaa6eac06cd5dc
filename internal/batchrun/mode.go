package batchrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store"
)

// Mode is what --batch-api and the flags beside it ask of a command, the
// same for summarize and eval.
type Mode struct {
	On     bool
	NoWait bool
	// Poll is the first wait between looks at a batch (0: DefaultPollMin);
	// it grows to DefaultPollMax.
	Poll time.Duration
	// SyncRetry sends the items a batch left unanswered through the
	// synchronous engine instead of the next batch.
	SyncRetry bool
	// RetryUnknown sends again the requests of a batch the key cannot see
	// (Config.RetryUnknown).
	RetryUnknown bool
	OnLook       func(store.Batch)
}

// Price is what an outcome cost: at batch the price of the batch API for
// an answer that came through it, at sync otherwise (an engine's, or a
// retry sent at once with SyncRetry).
func (m Mode) Price(o engine.Outcome, batch, sync models.Price) models.Price {
	if m.On && !o.Batched {
		return sync
	}
	return batch
}

// Worst is the price a request's worst case is counted at before it is
// sent: the batch price, unless its retries may go out at once at the
// synchronous one.
func (m Mode) Worst(batch, sync models.Price) models.Price {
	if m.On && m.SyncRetry {
		return sync
	}
	return batch
}

// Runner returns what a model's tasks go through: eng itself when the mode
// is off, else a batch run whose unanswered items eng takes with SyncRetry.
// cfg names the model's batcher, spec, base URL and store; the mode fills
// in the rest of it from its flags and eng.
func (m Mode) Runner(eng *engine.Engine, cfg Config) engine.Runner {
	if !m.On {
		return eng
	}
	cfg.NoWait, cfg.PollMin, cfg.OnLook, cfg.RetryUnknown = m.NoWait, m.Poll, m.OnLook, m.RetryUnknown
	cfg.Log, cfg.Tokens = eng.Log, eng.Tokens
	if m.SyncRetry {
		cfg.Sync = eng
	}
	return New(cfg)
}

// Check asks the provider for its batches before anything is sent: a
// server without batch endpoints (most OpenAI-compatible ones) or a key
// the batch API refuses is found out at no cost.
func Check(ctx context.Context, b provider.Batcher, spec provider.Spec, baseURL string) error {
	if b == nil {
		return fmt.Errorf("%s has no batch API. Try: without --batch-api", spec)
	}
	_, err := b.List(ctx, time.Now())
	var pe *provider.Error
	if errors.As(err, &pe) && (pe.StatusCode == http.StatusNotFound || pe.StatusCode == http.StatusMethodNotAllowed) {
		return fmt.Errorf("%s: the server at %s has no batch endpoints (HTTP %d when listing batches). Try: without --batch-api", spec, baseURL, pe.StatusCode)
	}
	if err != nil {
		return fmt.Errorf("%s: listing batches failed: %w", spec, err)
	}
	return nil
}
