//go:build !unix

package lease

// processAlive cannot tell here, so every owner counts as alive and its
// leases are waited out.
func processAlive(int) bool { return true }
