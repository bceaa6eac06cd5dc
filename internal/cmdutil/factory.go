package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// Globals are the flags every command takes.
type Globals struct {
	DB string
	// Payloads is the object store (--payloads URL) raw request and
	// response bodies go to; "" keeps them in the database.
	Payloads string
	Quiet    bool
	Verbose  bool
}

// Factory holds what commands need, built lazily, so that `digest version`
// never opens a database and tests can swap any piece. cmd.NewFactory
// builds the real one: this package knows no provider or database.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Globals   Globals
	Version   string
	Getenv    func(string) string

	// Store opens the database named by --db as access asks; the caller
	// closes it.
	Store func(ctx context.Context, access Access) (store.Store, error)
	// ParseDB reads a --db as a person means it: the SQLite file or the
	// database server it names, or a usage error for a name that looks like
	// a URL or a connection string but is none digest can use.
	ParseDB func(db string) (Database, error)
	// Provider returns the client of the provider serving a model: the
	// one piece of a model a test replaces. cmd builds every configured
	// model (its target, with limits, prices, base URL and shared rate
	// limit) around it, since this package may not know targets.
	Provider func(spec provider.Spec, o ProviderOptions) (provider.Provider, error)
}

// ProviderOptions shape the client of a hosted or local model.
type ProviderOptions struct {
	Tokenizer   *tokenizer.Tokenizer // the offline model counts its usage with it
	BaseURL     string               // --base-url; empty: the provider's variable or default
	Concurrency int                  // sizes the connection pool
}

// Database is what --db names.
type Database struct {
	// Name is the SQLite file's path, or the server's connection string
	// (which may hold a password: never to be shown).
	Name string
	// Server is a database server, shared by every machine that names it,
	// rather than a file.
	Server bool
}

// Access is what a command does with the database.
type Access int

const (
	// Create reads and writes, creating an SQLite file that does not exist
	// yet (summarize, eval).
	Create Access = iota
	// Write reads and writes a database that exists.
	Write
	// Read reads a database that exists, read-only when digest may not
	// write to it.
	Read
)

// Database reads --db.
func (f *Factory) Database() (Database, error) {
	return f.ParseDB(f.Globals.DB)
}

// OpenStore opens the database named by --db to read and write, creating
// an SQLite file that does not exist yet; a dry run with no database file
// yet gets nil instead: it reads a cache if there is one, and creates
// none. A server is always asked: its cache is everyone's.
func (f *Factory) OpenStore(ctx context.Context, dryRun bool) (store.Store, error) {
	db, err := f.Database()
	if err != nil {
		return nil, err
	}
	if dryRun && !db.Server {
		if _, err := os.Stat(db.Name); err != nil {
			return nil, nil
		}
	}
	return f.Store(ctx, Create)
}

// OpenExisting opens the database named by --db, which must exist:
// commands that read what others stored (runs, batches) create no
// database, nor its folder. A missing SQLite file is a usage error saying
// so. To read (write false), a database digest may not write to is opened
// read-only.
func (f *Factory) OpenExisting(ctx context.Context, write bool) (store.Store, error) {
	if _, err := f.Database(); err != nil {
		return nil, err
	}
	if path := f.MissingDB(); path != "" {
		return nil, UsageError("no database at %s: nothing has been stored there yet. Try: --db with the file digest summarize or digest eval wrote to (the default is %s)", path, DefaultDB())
	}
	access := Read
	if write {
		access = Write
	}
	return f.Store(ctx, access)
}

// DBFile is the database's file, which no report may overwrite; "" for a
// server, or a --db that names nothing digest can use (opening it says
// why).
func (f *Factory) DBFile() string {
	db, err := f.Database()
	if err != nil || db.Server {
		return ""
	}
	return db.Name
}

// MissingDB is the path --db names when it is an SQLite file that does
// not exist, else "".
func (f *Factory) MissingDB() string {
	path := f.DBFile()
	if path == "" {
		return ""
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return path
}

// Logger writes diagnostics to standard error: warnings by default, debug
// detail with --verbose, errors only with --quiet.
func (f *Factory) Logger() *slog.Logger {
	level := slog.LevelWarn
	switch {
	case f.Globals.Verbose:
		level = slog.LevelDebug
	case f.Globals.Quiet:
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(f.IOStreams.ErrOut, &slog.HandlerOptions{
		Level: level,
		// A person reading a terminal knows when it happened.
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// Infof prints a line for the person running digest, unless --quiet.
func (f *Factory) Infof(format string, args ...any) {
	if !f.Globals.Quiet {
		fmt.Fprintf(f.IOStreams.ErrOut, format+"\n", args...)
	}
}

// DefaultDB is digest.db under the user's cache directory.
func DefaultDB() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "digest", "digest.db")
}

// Example indents a command's examples the way cobra prints them.
func Example(lines ...string) string {
	return "  " + strings.Join(lines, "\n  ")
}
