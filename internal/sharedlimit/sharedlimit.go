// Package sharedlimit joins the engine's pacing to the store: every
// process whose requests go to the same account (provider, base URL,
// model, API key) charges one rate limit kept in the database they share,
// so that together they stay under the limit each would otherwise spend
// in full.
package sharedlimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/store"
)

// Name is the limiter of one account. The API key enters it as the first
// 16 bytes of its SHA-256 alone: the database is read by everyone who
// shares it, and the key must never be written there. Two spellings of one
// base URL are one account.
func Name(providerName, baseURL, model, apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return strings.Join([]string{providerName, key.BaseURL(baseURL), model, hex.EncodeToString(sum[:16])}, " ")
}

// Limit is the shared limit named name in s.
type Limit struct {
	Store store.RateStore
	Name  string
}

var _ engine.SharedLimit = Limit{}

// Take charges one request and its tokens.
func (l Limit) Take(ctx context.Context, requests, tokens engine.Charge) (engine.SharedState, error) {
	st, err := l.Store.TakeRate(ctx, l.Name, store.RateCharge(requests), store.RateCharge(tokens))
	if err != nil {
		return engine.SharedState{}, err
	}
	return engine.SharedState{Wait: st.Wait, Paused: st.Paused, RPM: st.Requests, TPM: st.Tokens}, nil
}

// Pause holds every process's requests for d.
func (l Limit) Pause(ctx context.Context, d time.Duration) error {
	return l.Store.PauseRate(ctx, l.Name, d)
}

// Learn records limits the provider told of.
func (l Limit) Learn(ctx context.Context, rpm, tpm int) error {
	return l.Store.LearnRate(ctx, l.Name, rpm, tpm)
}
