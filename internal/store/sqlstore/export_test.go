package sqlstore

// SetPruneChunk makes PruneRuns delete at most n result rows a
// transaction, until the returned func restores it.
func SetPruneChunk(n int) (restore func()) {
	was := pruneChunk
	pruneChunk = n
	return func() { pruneChunk = was }
}
