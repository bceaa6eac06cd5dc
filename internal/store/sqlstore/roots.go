package sqlstore

import (
	"context"

	"github.com/digest-cli/digest/internal/store"
)

// RepositoriesOf returns the repositories a commit is stored under. It lets
// digest identify a history without walking it to its root again.
func (s *DB) RepositoriesOf(ctx context.Context, commit string) ([]store.Repository, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.root_commit, r.path FROM commits c
		JOIN repositories r ON r.id = c.repo_id WHERE c.hash = ?`, commit)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var repos []store.Repository
	for rows.Next() {
		var r store.Repository
		if err := rows.Scan(&r.ID, &r.RootCommit, &r.Path); err != nil {
			return nil, s.explain(err)
		}
		repos = append(repos, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return repos, nil
}
