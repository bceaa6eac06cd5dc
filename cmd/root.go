// Package cmd wires digest's command line to the packages under internal/.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/memlimit"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Main runs digest and returns the process exit code. SIGINT, SIGTERM and
// SIGHUP (a closed terminal, a CI runner's shell going away) cancel the
// context every stage runs under, so claims are given back and what
// arrived is kept; a second signal kills at once.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore default handling: a second Ctrl-C ends the process
	}()
	ios := iostreams.System()
	return Execute(ctx, NewFactory(ios, versionString()), os.Args[1:])
}

// Execute runs the command line args and returns the exit code, printing
// any error as one line on standard error.
func Execute(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK // a signal that came after the work was done changes nothing
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg := "interrupted"
		if err != context.Canceled && !strings.HasSuffix(err.Error(), context.Canceled.Error()) {
			msg = err.Error()
		}
		fmt.Fprintln(f.IOStreams.ErrOut, "digest: "+textsafe.Line(msg))
		return cmdutil.ExitInterrupted
	}
	if isCobraUsageError(err) {
		err = cmdutil.AsUsage(err)
	}
	err = cmdutil.NameEnv(cmd, err)
	// One line, whatever the error quotes (a dataset line, a server's
	// text): a newline could start a workflow command in a CI log.
	fmt.Fprintf(f.IOStreams.ErrOut, "digest: %s\n", textsafe.Line(err.Error()))
	return cmdutil.Code(err)
}

// isCobraUsageError recognises cobra's own errors about the command line,
// which it returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires ", "invalid argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "digest",
		Short: "Summarize git history with LLMs, paying for each commit once",
		Long: fmt.Sprintf(`digest summarizes git history with an LLM, paying for each commit once:
every summary is kept in a local SQLite cache and reused on every later run.

It works with no API key and no network: the default model, offline, writes
extractive summaries from each commit's message and diff.

Every flag can also be set with a DIGEST_* environment variable named after
it (--max-commits: DIGEST_MAX_COMMITS). A flag on the command line wins over
the variable, and the variable over the default.

digest keeps the Go heap under a soft limit of %d MiB, raised while the work
needs more, and sizes its caches by it; GOMEMLIMIT sets another limit
(GOMEMLIMIT=off: none, for speed over memory on very long histories).`, memlimit.Default>>20),
		Example: cmdutil.Example(
			"digest summarize .",
			"digest summarize --rev origin/main..HEAD --format jsonl",
			"DIGEST_DB=/tmp/digest.db digest summarize ~/src/project"),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.ApplyEnv(cmd, f.Getenv)
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	// Every command's help ends with the exit codes, after its flags.
	root.SetHelpTemplate(root.HelpTemplate() + "\n" + cmdutil.ExitCodesHelp + "\n")
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return cmdutil.UsageError("%v. Try: %s --help", err, cmd.CommandPath())
	})

	pf := root.PersistentFlags()
	pf.StringVar(&f.Globals.DB, "db", cmdutil.DefaultDB(), "the cache of every result: an SQLite file, or postgres://USER:PASS@HOST:PORT/DB to share one PostgreSQL database between machines")
	pf.StringVar(&f.Globals.Payloads, "payloads", "", "keep raw request and response bodies in this object store, not the database: s3://BUCKET/PREFIX?region=R&endpoint=URL, gs://BUCKET, azblob://CONTAINER or file:///DIR (credentials from the environment, e.g. AWS_ACCESS_KEY_ID)")
	pf.BoolVarP(&f.Globals.Quiet, "quiet", "q", false, "print only data and errors: no progress, no summary line")
	pf.BoolVarP(&f.Globals.Verbose, "verbose", "v", false, "log each step to standard error")
	cmdutil.DocumentEnv(pf)

	root.AddCommand(NewSummarizeCmd(f, nil), NewEvalCmd(f, nil), NewRunsCmd(f), NewCacheCmd(f), NewBatchesCmd(f, nil), NewModelsCmd(f), NewVersionCmd(f), NewCompletionCmd(f))
	addHelpTopics(f, root)
	root.SetHelpCommand(newHelpCmd(f, root))
	return root
}
