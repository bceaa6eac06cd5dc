package promptfoo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// maxFile bounds each file a promptfoo config names: the whole
// file is held in memory, and a config is hand-written, so a file this big
// is a mistake (a log, a dump) rather than a dataset. A test may lower it.
var maxFile int64 = 64 << 20

// fileProblem is why a named file is refused, with what to do instead.
type fileProblem struct {
	why, try string
	err      error // the system's, for errors.Is
}

func (e *fileProblem) Error() string { return e.why }
func (e *fileProblem) Unwrap() error { return e.err }

// readRegular reads the config itself, named on the command line. Anything
// but a regular file is refused before it is opened: /dev/zero would fill
// memory, a FIFO or /dev/stdin would wait forever. The files the config
// names are read by confined.readFile, inside the config's folders.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, pathProblem(err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathProblem(err)
	}
	defer f.Close()
	// The file may have been swapped between Stat and Open.
	if fi, err = f.Stat(); err != nil {
		return nil, pathProblem(err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, pathProblem(err)
	}
	if int64(len(data)) > maxFile {
		return nil, tooBig()
	}
	return data, nil
}

func regular(path string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return &fileProblem{why: "is a directory", try: "a file, or a glob such as " + path + "/*.yaml"}
	case !fi.Mode().IsRegular():
		return &fileProblem{why: "is not a regular file (a device, FIFO or socket)", try: "a regular file holding the contents"}
	case fi.Size() > maxFile:
		return tooBig()
	}
	return nil
}

func tooBig() error {
	limit := fmt.Sprintf("%d bytes", maxFile)
	if maxFile%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", maxFile>>20)
	}
	return &fileProblem{why: "is larger than " + limit, try: "split it, or convert it to a JSON Lines dataset, which digest streams"}
}

func pathProblem(err error) error {
	why := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err
	}
	return &fileProblem{why: why.Error(), try: "a path relative to the config's folder", err: err}
}

// readRef reads a file the config names; when it cannot, it records one
// problem at at, "WHAT: why. Try: ...", and reports false.
func (l *loader) readRef(at, what, path string) ([]byte, bool) {
	data, err := l.read(path)
	if err == nil {
		return data, true
	}
	var fp *fileProblem
	if !errors.As(err, &fp) {
		fp = pathProblem(err).(*fileProblem)
	}
	l.problem(at, "%s: %s. Try: %s", what, fp.why, fp.try)
	return nil, false
}

// matchSegments matches a path, split at its slashes, against a pattern
// split the same way: ** any number of segments, others path.Match.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			for k := 0; k <= len(name); k++ {
				if matchSegments(pat[1:], name[k:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
