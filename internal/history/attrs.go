package history

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/digest-cli/digest/internal/gitattributes"
	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/userdiff"
)

// diffDrivers finds each file's diff driver as git does: the file's diff
// attribute, from the .gitattributes files of the work tree (of HEAD's
// tree in a bare repository) and $GIT_DIR/info/attributes, names a driver
// of the repository's configuration or a built-in one.
//
// The attributes are the repository's own, whatever commit is diffed, as
// in git; the user's and the system's attributes files and configuration
// are not read, so that a history's diffs are the same on every machine.
// Each directory's file is read once, when a file below it first changes.
type diffDrivers struct {
	drivers  *userdiff.Drivers
	info     *gitattributes.File // $GIT_DIR/info/attributes, or nil
	workTree string              // the work tree's root, or "" to read HEAD's tree
	r        *Repo

	mu       sync.RWMutex
	dirs     map[string]*attrDir
	warnings []string
}

// attrDir is one directory's part in the attributes.
type attrDir struct {
	// stack is the attributes files that apply below the directory, in
	// increasing precedence; a directory without a file of its own shares
	// its parent's.
	stack []*gitattributes.File
	// own is stack without info/attributes, for the directories below.
	own  []*gitattributes.File
	tree gitobjects.ID // the directory's tree in HEAD, when reading HEAD's tree
}

// maxAttrFileBytes is git's limit on an attributes file (ATTR_MAX_FILE_SIZE).
const maxAttrFileBytes = 100 << 20

// Warnings lists what digest could not honour of the repository's diff
// drivers (diff.NAME.* settings) and of the attributes files read so far,
// each on one line: call it after the diffs to see them all.
func (r *Repo) Warnings() []string {
	a := r.diffDrivers()
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]string(nil), a.warnings...)
}

// diffDrivers reads the configuration and info/attributes once.
func (r *Repo) diffDrivers() *diffDrivers {
	r.attrsOnce.Do(func() {
		a := &diffDrivers{r: r, dirs: map[string]*attrDir{}}
		var settings []userdiff.Setting
		if raw := r.localConfig(); raw != nil {
			for _, s := range raw.Sections {
				if !s.IsName("diff") {
					continue
				}
				for _, sub := range s.Subsections {
					for _, o := range sub.Options {
						settings = append(settings, userdiff.Setting{Driver: sub.Name, Key: o.Key, Value: o.Value})
					}
				}
			}
		}
		var warnings []string
		a.drivers, warnings = userdiff.Configure(settings)
		a.warnings = append(a.warnings, warnings...)
		if r.commonDir != "" {
			name := filepath.Join(r.commonDir, "info", "attributes")
			if text, ok := a.readFile(name); ok {
				a.info = a.parse(text, "", true, name)
			}
		}
		if r.workTree() {
			a.workTree = r.path
		}
		r.attrs = a
	})
	return r.attrs
}

// driverOf is the driver of one side of a change: none for an absent side
// or what is not a regular file (a symbolic link), as in git.
func (a *diffDrivers) driverOf(s side) *userdiff.Driver {
	if s.path == "" || s.mode != filemode.Regular && s.mode != filemode.Executable && s.mode != filemode.Deprecated {
		return nil
	}
	stack := a.dir(path.Dir(s.path)).stack
	if len(stack) == 0 {
		return nil
	}
	v := gitattributes.Lookup(stack, s.path, "diff")
	switch v.State {
	case gitattributes.Set:
		return userdiff.AsText
	case gitattributes.Unset:
		return userdiff.AsBinary
	case gitattributes.Valued:
		return a.drivers.Lookup(v.Text) // nil for an unknown name: git's default
	}
	return nil
}

// dir returns a directory's attributes ("." for the root), reading its
// file and its parents' the first time.
func (a *diffDrivers) dir(name string) *attrDir {
	if name == "." {
		name = ""
	}
	a.mu.RLock()
	d, ok := a.dirs[name]
	a.mu.RUnlock()
	if ok {
		return d
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dirLocked(name)
}

func (a *diffDrivers) dirLocked(name string) *attrDir {
	if d, ok := a.dirs[name]; ok {
		return d
	}
	d := &attrDir{}
	var parent *attrDir
	if name != "" {
		parentName := path.Dir(name)
		if parentName == "." {
			parentName = ""
		}
		parent = a.dirLocked(parentName)
		d.own = parent.own
	}
	if text, ok := a.attributesText(name, parent, d); ok {
		file := a.parse(text, name, name == "", path.Join(name, ".gitattributes"))
		d.own = append(d.own[:len(d.own):len(d.own)], file)
	}
	switch {
	case parent != nil && len(d.own) == len(parent.own):
		d.stack = parent.stack
	case a.info != nil:
		d.stack = append(d.own[:len(d.own):len(d.own)], a.info)
	default:
		d.stack = d.own
	}
	a.dirs[name] = d
	return d
}

// attributesText reads the directory's .gitattributes, from the work tree
// or HEAD's tree; for the latter it also finds the directory's tree.
func (a *diffDrivers) attributesText(name string, parent, d *attrDir) (string, bool) {
	if a.workTree != "" {
		return a.readFile(filepath.Join(a.workTree, filepath.FromSlash(name), ".gitattributes"))
	}
	if parent == nil {
		head, err := a.r.head()
		if err != nil {
			return "", false // an unborn HEAD: no attributes
		}
		c, err := a.r.commitObject(head)
		if err != nil {
			a.warnings = append(a.warnings, fmt.Sprintf("HEAD's .gitattributes: %v; diffs use git's default drivers", err))
			return "", false
		}
		d.tree = c.tree
	} else if !parent.tree.IsZero() {
		entries, err := a.r.tree(parent.tree)
		if err != nil {
			a.warnings = append(a.warnings, fmt.Sprintf("HEAD's tree %s: %v; its .gitattributes files are not read", name, err))
			return "", false
		}
		if e, ok := findEntry(entries, path.Base(name)); ok && e.isDir() {
			d.tree = e.hash
		}
	}
	if d.tree.IsZero() {
		return "", false
	}
	entries, err := a.r.tree(d.tree)
	if err != nil {
		a.warnings = append(a.warnings, fmt.Sprintf("HEAD's tree %s: %v; its .gitattributes files are not read", name, err))
		return "", false
	}
	e, ok := findEntry(entries, ".gitattributes")
	// git reads a regular file only, not a symbolic link of that name.
	if !ok || e.mode != filemode.Regular && e.mode != filemode.Executable {
		return "", false
	}
	obj, err := a.r.readObject(e.hash, plumbing.BlobObject, maxAttrFileBytes)
	if err != nil {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: %v; it is not read", path.Join(name, ".gitattributes"), err))
		return "", false
	}
	if obj.Data == nil && obj.Size > 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: %d bytes, over git's limit; it is ignored, as git ignores it", path.Join(name, ".gitattributes"), obj.Size))
		return "", false
	}
	return string(obj.Data), true
}

// readFile reads an attributes file of the file system: a regular file
// only, as git refuses to follow a symbolic link to one in the work tree.
func (a *diffDrivers) readFile(name string) (string, bool) {
	info, err := os.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	if info.Size() > maxAttrFileBytes {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: %d bytes, over git's limit; it is ignored, as git ignores it", name, info.Size()))
		return "", false
	}
	b, err := os.ReadFile(name)
	if err != nil {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: %v; it is not read", name, err))
		return "", false
	}
	return string(b), true
}

func (a *diffDrivers) parse(text, dir string, macros bool, name string) *gitattributes.File {
	f, warnings := gitattributes.Parse(text, dir, macros)
	for _, w := range warnings {
		a.warnings = append(a.warnings, name+": "+w)
	}
	return f
}

// findEntry finds a name among a tree's entries, which git sorts.
func findEntry(entries []treeEntry, name string) (treeEntry, bool) {
	for _, e := range entries {
		if e.name == name {
			return e, true
		}
	}
	return treeEntry{}, false
}

// funcDriver is the driver whose function-line rule a change's hunk
// headers use: the old side's when it has one, else the new side's; nil
// when neither has one, for git's default rule.
func funcDriver(from, to *userdiff.Driver) *userdiff.Driver {
	switch {
	case from.HasFuncRule():
		return from
	case to.HasFuncRule():
		return to
	}
	return nil
}

// declared is what a side's driver says of its content.
func declared(d *userdiff.Driver) userdiff.Content {
	if d == nil {
		return userdiff.ByContent
	}
	return d.Content
}
