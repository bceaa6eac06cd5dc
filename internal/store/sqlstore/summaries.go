package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// SaveRepository records a repository, refreshing the path it was seen at.
func (s *DB) SaveRepository(ctx context.Context, r store.Repository) error {
	now := s.timeArg(time.Now(), time.RFC3339Nano)
	_, err := s.db.ExecContext(ctx, `INSERT INTO repositories(id, root_commit, path, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET path = excluded.path, updated_at = excluded.updated_at`,
		r.ID, r.RootCommit, r.Path, now, now)
	if err != nil {
		return s.explain(err)
	}
	return nil
}

// lookupChunk keeps IN lists under SQLite's bound-parameter limit.
const lookupChunk = 500

// Summaries returns the stored summaries among commits for one model,
// prompt version and scope, keyed by commit hash.
func (s *DB) Summaries(ctx context.Context, repoID, model, promptVersion, scope string, commits []string) (map[string]store.Summary, error) {
	found := make(map[string]store.Summary)
	for start := 0; start < len(commits); start += lookupChunk {
		chunk := commits[start:min(start+lookupChunk, len(commits))]
		args := []any{repoID, model, promptVersion, scope}
		for _, c := range chunk {
			args = append(args, c)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT commit_hash, summary, input_tokens, output_tokens, cost_usd,
			diff_tokens, truncated, skipped_files, created_at, partial, change_type, change_scope, breaking
			FROM summaries WHERE repo_id = ? AND model = ? AND prompt_version = ? AND scope = ?
			AND commit_hash IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			sum := store.Summary{SummaryKey: store.SummaryKey{RepoID: repoID, Model: model, PromptVersion: promptVersion, Scope: scope}}
			var skipped string
			var created dbTime
			if err := rows.Scan(&sum.Commit, &sum.Text, &sum.InputTokens, &sum.OutputTokens, &sum.CostUSD,
				&sum.DiffTokens, &sum.Truncated, &skipped, &created, &sum.Partial, &sum.ChangeType, &sum.ChangeScope, &sum.Breaking); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			if err := json.Unmarshal([]byte(skipped), &sum.SkippedFiles); err != nil {
				rows.Close()
				return nil, fmt.Errorf("database %s: summary of %s has unreadable skipped_files: %w", s.name, sum.Commit, err)
			}
			sum.CreatedAt = created.Time
			found[sum.Commit] = sum
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.explain(err)
		}
	}
	return found, nil
}

// SaveSummary commits one summary and its commit in a single transaction,
// so a crash leaves either both or neither. The first summary stored for a
// key wins: a concurrent duplicate is dropped, never overwriting what was
// paid, except that a complete summary replaces a partial one.
func (s *DB) SaveSummary(ctx context.Context, c store.Commit, sum store.Summary) error {
	skipped, err := json.Marshal(nonNil(sum.SkippedFiles))
	if err != nil {
		return err
	}
	created := sum.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO commits(repo_id, hash, author_name, author_email, author_date, commit_date, subject)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		c.RepoID, c.Hash, c.AuthorName, c.AuthorEmail,
		s.timeArg(c.AuthorDate, time.RFC3339), s.timeArg(c.CommitDate, time.RFC3339), c.Subject); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO summaries(repo_id, commit_hash, model, prompt_version, scope,
		summary, input_tokens, output_tokens, cost_usd, diff_tokens, truncated, skipped_files, created_at, partial,
		change_type, change_scope, breaking)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(repo_id, commit_hash, model, prompt_version, scope) DO UPDATE SET
			summary = excluded.summary, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
			cost_usd = excluded.cost_usd, diff_tokens = excluded.diff_tokens, truncated = excluded.truncated,
			skipped_files = excluded.skipped_files, created_at = excluded.created_at, partial = excluded.partial,
			change_type = excluded.change_type, change_scope = excluded.change_scope, breaking = excluded.breaking
		WHERE summaries.partial AND NOT excluded.partial`,
		sum.RepoID, sum.Commit, sum.Model, sum.PromptVersion, sum.Scope,
		sum.Text, sum.InputTokens, sum.OutputTokens, sum.CostUSD, sum.DiffTokens, sum.Truncated,
		string(skipped), s.timeArg(created, time.RFC3339Nano), sum.Partial,
		sum.ChangeType, sum.ChangeScope, sum.Breaking); err != nil {
		return s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return s.explain(err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
