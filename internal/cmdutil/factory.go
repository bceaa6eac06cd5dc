package cmdutil

import (
	"context"
	"fmt"
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
	DB      string
	Quiet   bool
	Verbose bool
}

// Factory holds what commands need, built lazily, so that `digest version`
// never opens a database and tests can swap any piece. cmd.NewFactory
// builds the real one: this package knows no provider or database.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Globals   Globals
	Version   string
	Getenv    func(string) string

	// Store opens the database named by --db; the caller closes it.
	Store func(ctx context.Context) (store.Store, error)
	// IsServer reports whether --db names a database server (shared by
	// every machine that names it) rather than a file.
	IsServer func(db string) bool
	// Provider returns the provider serving a model.
	Provider func(spec provider.Spec, o ProviderOptions) (provider.Provider, error)
	// BaseURL is the endpoint a model is served from: flag (--base-url),
	// else the provider's variable, else its default; a usage error when
	// that is not an http or https URL with a host.
	BaseURL func(spec provider.Spec, flag string) (string, error)
	// LimitName names the rate limit a model's requests share with every
	// process using the same account ("" for none).
	LimitName func(spec provider.Spec, flag string) (string, error)
}

// ProviderOptions shape the client of a hosted or local model.
type ProviderOptions struct {
	Tokenizer   *tokenizer.Tokenizer // the offline model counts its usage with it
	BaseURL     string               // --base-url; empty: the provider's variable or default
	Concurrency int                  // sizes the connection pool
}

// OpenStore opens the database named by --db; a dry run with no database
// file yet gets nil instead: it reads a cache if there is one, and creates
// none. A server is always asked: its cache is everyone's.
func (f *Factory) OpenStore(ctx context.Context, dryRun bool) (store.Store, error) {
	if _, err := os.Stat(f.Globals.DB); dryRun && err != nil && !f.IsServer(f.Globals.DB) {
		return nil, nil
	}
	return f.Store(ctx)
}

// DBFile is the database's file, which no report may overwrite; "" for a
// server.
func (f *Factory) DBFile() string {
	if f.IsServer(f.Globals.DB) {
		return ""
	}
	return f.Globals.DB
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
