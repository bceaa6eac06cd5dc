//go:build !unix

package gitobjects

import "os"

// mapFile reads a file whole where mapping it is not available.
func mapFile(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	return data, func() error { return nil }, err
}
