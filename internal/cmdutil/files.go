package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile writes through write to stdout when path is "" or "-", else to
// what path names. A regular file (or a new one) is replaced atomically: the
// text goes to a temporary file beside it, renamed into place, so a failed
// run never leaves half a report behind, and a replaced file keeps its mode.
// A symbolic link is followed and its target replaced, so the link stays a
// link. Anything else (a device such as /dev/null, a FIFO, a terminal,
// /dev/stdout) is opened and written as it is: renaming a file over it
// would destroy it, which as root means replacing the machine's /dev/null.
func WriteFile(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	target, info, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if info != nil && !info.Mode().IsRegular() || isProcLink(target) {
		if info != nil && info.IsDir() {
			return fmt.Errorf("%s is a directory. Try: a file path", path)
		}
		return writeThrough(path, write)
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
	if err != nil {
		return fmt.Errorf("%s: %w. Try: a path in a writable directory", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mode := os.FileMode(0o644)
	if info != nil {
		mode = info.Mode().Perm()
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Replaces reports whether WriteFile replaces what path names whole, so
// that a failed write leaves it as it was: a regular file, or none yet.
// Standard output, a device, a FIFO and /dev/stdout are written through.
func Replaces(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	target, info, err := resolve(path)
	return err == nil && !isProcLink(target) && (info == nil || info.Mode().IsRegular())
}

// writeThrough writes to a path that is not a regular file. O_APPEND keeps
// whatever a shell redirection already put behind /dev/stdout.
func writeThrough(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// maxLinks bounds a chain of symbolic links, as the kernel's ELOOP does.
const maxLinks = 40

// resolve follows path's symbolic links to the name that is really written:
// an absolute path, and its file's information, nil when nothing is there
// yet (a dangling link resolves to the file it would create). Links through
// /proc (/dev/stdout is one) name open files, not places to put one: such a
// path resolves to itself, to be written through.
func resolve(path string) (string, fs.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	for range maxLinks {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
		info, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return abs, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return abs, info, nil
		}
		if isProcLink(abs) {
			info, err := os.Stat(abs)
			return abs, info, err
		}
		link, err := os.Readlink(abs)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(abs), link)
		}
		abs = filepath.Clean(link)
	}
	return "", nil, fmt.Errorf("too many levels of symbolic links")
}

// isProcLink reports a link of /proc, such as /proc/self/fd/1 behind
// /dev/stdout: it names an open file (a pipe, a terminal, or whatever a
// shell redirected to), written as it is.
func isProcLink(abs string) bool { return strings.HasPrefix(abs, "/proc/") }

// A NamedPath is a file a run reads or writes, with the flag that named it.
type NamedPath struct {
	Flag string // "-o", "--db", "the dataset"
	Path string
}

// CheckOutputs refuses, before anything is sent or paid for, outputs that
// would destroy what the run depends on: an output that is the database (or
// its -wal, -shm or -journal file), an input, or another output of the
// same run, through whatever links, relative paths or hard links name it;
// and an output in a directory that does not exist, or that is a
// directory. Paths "" and "-" (standard output, standard input) are
// skipped.
func CheckOutputs(outputs []NamedPath, db string, inputs []NamedPath) error {
	var keep []NamedPath
	if db != "" {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			keep = append(keep, NamedPath{"--db " + db, db + suffix})
		}
	}
	keep = append(keep, inputs...)
	var written []NamedPath
	for _, out := range outputs {
		if out.Path == "" || out.Path == "-" {
			continue
		}
		target, info, err := resolve(out.Path)
		if err != nil {
			return UsageError("%s %s: %v. Try: another path", out.Flag, out.Path, err)
		}
		if info == nil {
			if dir, err := os.Stat(filepath.Dir(target)); err != nil || !dir.IsDir() {
				return UsageError("%s %s: directory %s does not exist. Try: create it first, or another path", out.Flag, out.Path, filepath.Dir(target))
			}
		} else if info.IsDir() {
			return UsageError("%s %s is a directory. Try: a file path in it", out.Flag, out.Path)
		} else if !info.Mode().IsRegular() || isProcLink(target) {
			continue // written through: a device or a pipe is not replaced, and is no one's data
		}
		for _, k := range keep {
			if samePath(target, info, k.Path) {
				what := k.Flag
				if strings.HasPrefix(k.Flag, "--db") {
					what = "the database (" + k.Flag + ")"
				}
				return UsageError("%s %s is %s: writing the report there would destroy it. Try: another %s path", out.Flag, out.Path, what, out.Flag)
			}
		}
		for _, w := range written {
			if samePath(target, info, w.Path) {
				return UsageError("%s %s and %s %s are the same file: one report would replace the other. Try: a path of its own for each", w.Flag, w.Path, out.Flag, out.Path)
			}
		}
		written = append(written, out)
	}
	return nil
}

// samePath reports whether path names the file at target (info, nil when
// there is none yet).
func samePath(target string, info fs.FileInfo, path string) bool {
	if path == "" || path == "-" {
		return false
	}
	other, otherInfo, err := resolve(path)
	if err != nil {
		return false
	}
	if info != nil && otherInfo != nil {
		return os.SameFile(info, otherInfo)
	}
	return other == target
}

// AppendFile adds data to the end of path, as to a GitHub step summary.
func AppendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
