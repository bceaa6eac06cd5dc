package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"text/template"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/cmdutil"
)

// checkTemplate runs --template once on sample notes, before anything is
// read or paid for, under its limits: a field that does not exist, or a
// template past a limit, is a usage error (exit 2); a signal stops it at
// once (exit 130), whatever the template is doing.
func checkTemplate(ctx context.Context, log *slog.Logger, reporter changelog.Reporter) error {
	t, ok := reporter.(changelog.Template)
	if !ok {
		return nil
	}
	log.Debug("running --template on sample notes", "template", t.T.Name())
	err := t.Check(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return cmdutil.Interrupted("interrupted while --template ran on sample notes; nothing was sent")
	}
	return cmdutil.AsUsage(err)
}

// writeChangelog writes the changelog to -o or standard output. A
// --template runs under its limits and stops at once on a signal; past a
// limit or on a signal, -o's file is left as it was (cmdutil.WriteFile
// renames the output into place only once it is whole), and the error
// says that every summary is stored: a rerun, the limit raised, reads
// them from the cache.
func writeChangelog(ctx context.Context, o *SummarizeOptions, reporter changelog.Reporter, c *changelog.Changelog) error {
	t, isTemplate := reporter.(changelog.Template)
	if isTemplate {
		o.Logger().Debug("writing the changelog through --template", "template", t.T.Name())
	}
	write := func(w io.Writer) error {
		if isTemplate {
			return t.WriteContext(ctx, w, c)
		}
		return reporter.Write(w, c)
	}
	var err error
	if o.Prepend != "" {
		err = prepend(o.Prepend, write)
	} else {
		err = cmdutil.WriteFile(o.Output, o.IO.Out, write)
	}
	if err == nil || !isTemplate {
		return err
	}
	// What -o holds now: a file is renamed into place only once whole.
	left := o.Output + " holds what it wrote until then"
	switch {
	case o.Output == "" || o.Output == "-":
		left = "standard output holds what it wrote until then"
	case cmdutil.Replaces(o.Output):
		left = o.Output + " was not written"
	}
	var budget *changelog.BudgetError
	var exec template.ExecError
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return cmdutil.Interrupted(fmt.Sprintf("interrupted while --template wrote the changelog; %s; every summary is stored: run the same command again to write it", left))
	case errors.As(err, &budget):
		return fmt.Errorf("%v; %s, and every summary is stored. Try: a higher %s, or 0 for no limit, and the same command again: it reads the summaries from the cache",
			budget, left, budget.Flag)
	case errors.As(err, &exec):
		return fmt.Errorf("--template: %v; %s, and every summary is stored. Try: fix the template, and the same command again: it reads the summaries from the cache", exec, left)
	}
	return err
}

// prepend writes the new sections above those of the changelog at path,
// keeping the rest of it byte for byte (changelog.Prepend); a file that does
// not exist yet gets the notes whole. The file is replaced only once the
// whole of it is written.
func prepend(path string, write func(io.Writer) error) error {
	existing, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--prepend: %w. Try: the path of the changelog to add to", err)
	}
	var notes bytes.Buffer
	if err := write(&notes); err != nil {
		return err
	}
	out, err := changelog.Prepend(existing, notes.Bytes())
	if err != nil {
		return fmt.Errorf("--prepend %s: %w", path, err)
	}
	return cmdutil.WriteFile(path, nil, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
}
