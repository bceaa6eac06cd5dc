package store

import (
	"context"
	"database/sql"
)

// RootOf returns the root commit of the repository a stored commit belongs
// to, letting digest identify a history without walking it to its root.
func (s *Store) RootOf(ctx context.Context, commit string) (string, bool, error) {
	var root string
	err := s.db.QueryRowContext(ctx, `SELECT r.root_commit FROM commits c
		JOIN repositories r ON r.id = c.repo_id WHERE c.hash = ? LIMIT 1`, commit).Scan(&root)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, s.explain(err)
	}
	return root, true, nil
}
