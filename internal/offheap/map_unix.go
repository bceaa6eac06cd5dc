//go:build unix

package offheap

import (
	"os"
	"syscall"
)

// mapAnonymous maps size bytes of private memory, nil if it cannot.
func mapAnonymous(size int) ([]byte, func()) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	return b, func() { _ = syscall.Munmap(b) }
}

// MapFile maps a file read-only. Mapped, a pack index stays out of the Go
// heap, where the collector's headroom would double its cost in memory
// (git.git's index is 23 MB), and only the pages lookups touch are read.
// Where the file system cannot map it, it is read instead.
func MapFile(path string) (data []byte, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		data, err = os.ReadFile(path)
		return data, func() error { return nil }, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
