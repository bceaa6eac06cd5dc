//go:build !unix

package offheap

import "os"

// mapAnonymous cannot map memory here: Slice takes it from the heap.
func mapAnonymous(int) ([]byte, func()) { return nil, nil }

// MapFile reads a file whole where mapping it is not available.
func MapFile(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	return data, func() error { return nil }, err
}
