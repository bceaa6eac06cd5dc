// Package offheap allocates large, long-lived, pointer-free buffers outside
// the Go heap. The collector sets its next target at twice the live heap,
// so a table or cache held for a whole run costs twice its size in the
// heap, and once out here.
package offheap

import "unsafe"

// Slice returns n zeroed values of T outside the Go heap and the function
// that gives them back, after which the slice must not be used. T must hold
// no pointers: the collector never looks at this memory. Where the system
// cannot map memory, the slice comes from the heap.
func Slice[T any](n int) ([]T, func()) {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if n <= 0 || size <= 0 {
		return nil, func() {}
	}
	b, free := mapAnonymous(size)
	if b == nil {
		return make([]T, n), func() {}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), free
}

// String is b's bytes as a string without a copy, for text read in place
// (a blob borrowed from the cache of delta bases): nothing may write b
// while the string is used.
func String(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
