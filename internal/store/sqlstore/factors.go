package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// TokenFactor returns what is learned of model's tokenizer.
func (s *DB) TokenFactor(ctx context.Context, model string) (store.TokenFactor, bool, error) {
	f := store.TokenFactor{Model: model}
	err := s.db.QueryRowContext(ctx, `SELECT factor, samples FROM token_factors WHERE model = ?`, model).Scan(&f.Factor, &f.Samples)
	if err == sql.ErrNoRows {
		return f, false, nil
	}
	if err != nil {
		return f, false, s.explain(err)
	}
	return f, true, nil
}

// SaveTokenFactor folds f into the stored factor in one statement, so
// that processes saving at once each count.
func (s *DB) SaveTokenFactor(ctx context.Context, f store.TokenFactor) error {
	if f.Samples <= 0 || !(f.Factor > 0) || math.IsInf(f.Factor, 0) {
		return fmt.Errorf("token factor %v over %d samples: want a positive factor and samples", f.Factor, f.Samples)
	}
	samples := min(f.Samples, store.MaxFactorSamples)
	_, err := s.db.ExecContext(ctx, `INSERT INTO token_factors(model, factor, samples, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(model) DO UPDATE SET
			factor = (token_factors.factor * token_factors.samples + excluded.factor * excluded.samples) / (token_factors.samples + excluded.samples),
			samples = CASE WHEN token_factors.samples + excluded.samples > ? THEN ? ELSE token_factors.samples + excluded.samples END,
			updated_at = excluded.updated_at`,
		f.Model, f.Factor, samples, s.timeArg(time.Now(), time.RFC3339Nano), store.MaxFactorSamples, store.MaxFactorSamples)
	return s.explain(err)
}
