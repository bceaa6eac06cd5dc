package cmdutil

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/digest-cli/digest/internal/budget"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/store"
)

// Globals are the flags every command takes.
type Globals struct {
	DB      string
	Quiet   bool
	Verbose bool
}

// Factory builds what commands need, lazily, so that `digest version` never
// opens a database and tests can swap any piece.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Globals   Globals
	Version   string
	Getenv    func(string) string

	// Store opens the database named by --db; the caller closes it.
	Store func(ctx context.Context) (*store.Store, error)
	// Provider returns the provider serving a model.
	Provider func(spec provider.Spec, tok *budget.Tokenizer) (provider.Provider, error)
}

// New returns the factory of the real program.
func New(ios *iostreams.IOStreams, version string) *Factory {
	f := &Factory{IOStreams: ios, Version: version, Getenv: os.Getenv}
	f.Store = func(ctx context.Context) (*store.Store, error) {
		return store.Open(ctx, f.Globals.DB)
	}
	f.Provider = NewProvider
	return f
}

// NewProvider returns the provider for spec.
func NewProvider(spec provider.Spec, tok *budget.Tokenizer) (provider.Provider, error) {
	switch spec.Provider {
	case provider.Offline:
		return offline.New(tok.Count), nil
	}
	return nil, UsageError("unknown provider %q in --model %s. Try: --model offline (built in, no key needed)", spec.Provider, spec)
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
