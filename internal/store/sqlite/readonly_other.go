//go:build !unix

package sqlite

// readOnly is nil where digest cannot ask the system: opening the
// database for writing says why it cannot be written, when it cannot.
func readOnly(string) *readOnlyWhy { return nil }
