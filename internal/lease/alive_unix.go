//go:build unix

package lease

import (
	"errors"
	"syscall"
)

// processAlive asks the kernel whether pid exists, without signalling it.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
