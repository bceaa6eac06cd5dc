package promptfoo

import (
	"os"
	"syscall"
)

// systemFS names the system folder whose file system f is on (procfs,
// sysfs and their kin, wherever they are mounted), "" for any other: the
// last check, on the open file, whatever its path was.
func systemFS(f *os.File) string {
	conn, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var st syscall.Statfs_t
	var serr error
	if err := conn.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return ""
	}
	switch uint64(st.Type) {
	case 0x9fa0: // PROC_SUPER_MAGIC
		return "/proc"
	case 0x62656572, // SYSFS_MAGIC
		0x64626720, // DEBUGFS_MAGIC
		0x74726163, // TRACEFS_MAGIC
		0x73636673, // SECURITYFS_MAGIC
		0xde5e81e4, // EFIVARFS_MAGIC
		0x27e0eb,   // CGROUP_SUPER_MAGIC
		0x63677270: // CGROUP2_SUPER_MAGIC
		return "/sys"
	}
	return ""
}
