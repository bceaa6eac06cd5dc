package promptfoo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// systemDirs hold devices and the machine's live state: /proc/self/environ
// is the environment, API keys among them. A config may never read them,
// whatever folders --allow-outside opens.
var systemDirs = []string{"/proc", "/sys", "/dev"}

// systemDir is the system folder abs lies in, "" when none.
func systemDir(abs string) string {
	p := filepath.ToSlash(abs)
	for _, d := range systemDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

// folder is a tree whose files a config may read: its own folder, or one
// opened by --allow-outside.
type folder struct {
	abs  string   // absolute and clean, as named
	real string   // the same, its symbolic links resolved
	root *os.Root // every open goes through it: no link leads out
}

// confined opens the files a config names, and only those inside its
// folders: a path is placed in a folder by its name, and opened through
// that folder's os.Root, which refuses a symbolic link or .. that leads
// out of it. Nothing under /proc, /sys or /dev is read. Every file read is
// noted, for the run to protect from its outputs.
type confined struct {
	folders []folder // the config's own first
	read    []string // absolute paths of the files read, each once, in order
}

// openConfined opens the config's folder.
func openConfined(dir string) (*confined, error) {
	c := &confined{}
	if err := c.add(dir); err != nil {
		return nil, fmt.Errorf("its folder %s cannot be opened: %v. Try: a config in a folder digest can read", dir, why(err))
	}
	return c, nil
}

// allow opens the folders of --allow-outside. One that is missing, not a
// folder, or a system folder is refused in an error naming the flag.
func (c *confined) allow(dirs []string) error {
	for _, a := range dirs {
		if err := c.add(a); err != nil {
			var fp *fileProblem
			if errors.As(err, &fp) {
				return fmt.Errorf("--allow-outside %s: %s. Try: %s", a, fp.why, fp.try)
			}
			return fmt.Errorf("--allow-outside %s: %v. Try: the path of an existing folder", a, why(err))
		}
	}
	return nil
}

func (c *confined) add(name string) error {
	abs, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	if d := systemDir(real); d != "" {
		return &fileProblem{why: "is under " + d + ", which no config may read", try: "a folder holding copies of the files the config needs"}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return err
	}
	c.folders = append(c.folders, folder{abs: abs, real: real, root: root})
	return nil
}

// why is the system's reason, without the path an *fs.PathError repeats.
func why(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (c *confined) close() {
	for _, f := range c.folders {
		f.root.Close()
	}
}

// within is the folder abs lies in, by name (the folder's as named, or as
// resolved), and abs relative to it; the config's own folder first.
func (c *confined) within(abs string) (folder, string, bool) {
	for _, f := range c.folders {
		for _, base := range []string{f.abs, f.real} {
			if rel, ok := inside(base, abs); ok {
				return f, rel, true
			}
		}
	}
	return folder{}, "", false
}

// inside is abs relative to base, when it lies in it.
func inside(base, abs string) (string, bool) {
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// escapes reports the error of an os.Root asked for a path that leads out
// of it.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// home is the config's own folder, for messages.
func (c *confined) home() string { return c.folders[0].abs }

func (c *confined) allowTry(dir string) string {
	return fmt.Sprintf("move it into %s, or --allow-outside %s to let the config read that folder", c.home(), dir)
}

func (c *confined) systemProblem(d string) error {
	return &fileProblem{
		why: "is under " + d + ", which no config may read, even with --allow-outside (devices, and the system's state with its API keys)",
		try: "copy what the config needs into a file in " + c.home(),
	}
}

func (c *confined) outsideProblem(abs string) error {
	where := "the config's folder " + c.home()
	if len(c.folders) > 1 {
		where += " and the --allow-outside folders"
	}
	return &fileProblem{why: "is outside " + where, try: c.allowTry(filepath.Dir(abs))}
}

func (c *confined) linkProblem(real string) error {
	if real == "" {
		return &fileProblem{why: "leads out of the config's folder " + c.home() + " through a symbolic link", try: "copy the file into " + c.home()}
	}
	if d := systemDir(real); d != "" {
		return c.systemProblem(d)
	}
	return &fileProblem{
		why: "is a symbolic link leading out of the config's folder " + c.home() + " (to " + real + ")",
		try: "copy the file into " + c.home() + ", or --allow-outside " + filepath.Dir(real) + " to let the config read that folder",
	}
}

// open opens a regular file of the config's folders (name is how
// messages show it), refusing every way out.
func (c *confined) open(name, abs string) (*os.File, error) {
	if d := systemDir(abs); d != "" {
		return nil, c.systemProblem(d)
	}
	f, rel, ok := c.within(abs)
	if !ok {
		return nil, c.outsideProblem(abs)
	}
	// Where its links lead, for a link into a system folder (the config's
	// folder may be /) or into another allowed folder. The root enforces
	// the rest: a link changed after this is still refused.
	real, rerr := filepath.EvalSymlinks(abs)
	if rerr == nil {
		if d := systemDir(real); d != "" {
			return nil, c.systemProblem(d)
		}
	}
	file, err := openIn(f.root, rel, name)
	if err == nil || !escapes(err) {
		return file, err
	}
	if rerr != nil {
		return nil, c.linkProblem("")
	}
	// A link from one allowed folder into another is allowed.
	if g, rel, ok := c.within(real); ok {
		if file, err := openIn(g.root, rel, name); err == nil || !escapes(err) {
			return file, err
		}
	}
	return nil, c.linkProblem(real)
}

// openIn opens a regular file of root for reading. Anything else is
// refused before it is opened, and opened without waiting should it be
// swapped in meanwhile: opening a FIFO waits for a writer.
func openIn(root *os.Root, rel, name string) (*os.File, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// readFile reads a file the config names (path as messages show it): a
// regular file of the config's folders, at most maxFile bytes.
// Anything but a regular file is refused before a byte is read: /dev/zero
// would fill memory, a FIFO wait forever.
func (c *confined) readFile(name string) ([]byte, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, pathProblem(err)
	}
	f, err := c.open(name, abs)
	if err != nil {
		var fp *fileProblem
		if errors.As(err, &fp) {
			return nil, err
		}
		return nil, pathProblem(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, pathProblem(err)
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	if d := systemFS(f); d != "" {
		return nil, c.systemProblem(d)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, pathProblem(err)
	}
	if int64(len(data)) > maxFile {
		return nil, tooBig()
	}
	c.note(abs)
	return data, nil
}

func (c *confined) note(abs string) {
	if !slices.Contains(c.read, abs) {
		c.read = append(c.read, abs)
	}
}

// exists reports whether something is at name, for a prompt that may name
// a file: looked at, not read.
func (c *confined) exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// glob expands a pattern as filepath.Glob does, and a ** segment as
// promptfoo's glob does (any number of folders, none included), inside
// the folder its fixed part names, which must be one of the config's
// folders. Matches are named as the pattern is (relative when it is).
// Symbolic links to folders are not walked into, so a walk cannot loop.
func (c *confined) glob(pattern string) ([]string, error) {
	segs := strings.Split(filepath.ToSlash(filepath.Clean(pattern)), "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, err
		}
	}
	fixed := 0
	for fixed < len(segs) && !strings.ContainsAny(segs[fixed], "*?[") {
		fixed++
	}
	start := strings.Join(segs[:fixed], "/")
	switch {
	case fixed == 0:
		start = "."
	case start == "":
		start = "/"
	}
	start = filepath.FromSlash(start)
	abs, err := filepath.Abs(start)
	if err != nil {
		return nil, pathProblem(err)
	}
	if d := systemDir(abs); d != "" {
		return nil, c.systemProblem(d)
	}
	f, rel, ok := c.within(abs)
	if !ok {
		return nil, c.outsideProblem(filepath.Join(abs, "x"))
	}
	if _, err := f.root.Stat(rel); escapes(err) {
		real, _ := filepath.EvalSymlinks(abs)
		return nil, c.linkProblem(real)
	}
	rel = filepath.ToSlash(rel)
	rest := segs[fixed:]
	var matches []string
	if !strings.Contains(strings.Join(rest, "/"), "**") {
		matches, err = fs.Glob(f.root.FS(), path.Join(rel, strings.Join(rest, "/")))
		if err != nil {
			return nil, err
		}
	} else {
		fsys := f.root.FS()
		err := fs.WalkDir(fsys, rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == rel {
					return fs.SkipAll // no such folder: no match
				}
				return nil // an unreadable folder holds no match, as for Glob
			}
			if d.IsDir() {
				return nil
			}
			if matchSegments(rest, strings.Split(under(rel, p), "/")) {
				matches = append(matches, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		out[i] = filepath.Join(start, filepath.FromSlash(under(rel, m)))
	}
	return out, nil
}

// under is p, a slash path in dir, relative to dir.
func under(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// anyMatch reports whether a pattern a prompt may be matches a file. A
// pattern outside the config's folders is only listed, never walked or
// read: a match makes it a file, which is then refused.
func (c *confined) anyMatch(pattern string) bool {
	m, err := c.glob(pattern)
	var fp *fileProblem
	if errors.As(err, &fp) && !strings.Contains(pattern, "**") {
		m, _ = filepath.Glob(pattern)
	}
	return len(m) > 0
}
