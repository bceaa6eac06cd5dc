//go:build unix

package offheap

import "syscall"

// mapAnonymous maps size bytes of private memory, nil if it cannot.
func mapAnonymous(size int) ([]byte, func()) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	return b, func() { _ = syscall.Munmap(b) }
}
