//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// readOnly says why digest may not write to the database at path, or nil
// if it may: the file is not writable to this user, or its folder is not
// (SQLite creates its -wal and -shm files beside the database), or the
// file system is mounted read-only. A path that does not exist is asked
// of its folder alone. Root may write anywhere but on a read-only file
// system.
func readOnly(path string) *readOnlyWhy {
	fsRO := &readOnlyWhy{why: "its file system is read-only", fix: "a copy of it on a writable disk"}
	err := syscall.Access(path, 2) // W_OK
	switch {
	case errors.Is(err, syscall.EROFS):
		return fsRO
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return &readOnlyWhy{why: "the file is not writable", fix: fmt.Sprintf("make it writable (chmod u+w %s)", path)}
	}
	dir := filepath.Dir(path)
	err = syscall.Access(dir, 2|1) // W_OK|X_OK
	switch {
	case errors.Is(err, syscall.EROFS):
		return fsRO
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return &readOnlyWhy{why: fmt.Sprintf("its folder %s is not writable, and SQLite keeps its journal beside it", dir), fix: fmt.Sprintf("make the folder writable (chmod u+w %s)", dir)}
	}
	return nil
}
