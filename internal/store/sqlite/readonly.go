package sqlite

// readOnlyWhy says why digest may not write to a database: why, and what
// would let it.
type readOnlyWhy struct {
	why, fix string
}
