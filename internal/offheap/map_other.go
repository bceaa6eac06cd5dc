//go:build !unix

package offheap

// mapAnonymous cannot map memory here: Slice takes it from the heap.
func mapAnonymous(int) ([]byte, func()) { return nil, nil }
