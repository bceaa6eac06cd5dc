package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/eval"
	"github.com/digest-cli/digest/internal/report"
	"github.com/digest-cli/digest/internal/store"
)

// NewRunsCmd builds `digest runs`: past evaluation runs, read back from the
// store without any call.
func NewRunsCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and show past evaluation runs",
		Long:  "Read past digest eval runs back from the database, without sending anything.",
		Example: cmdutil.Example(
			"digest runs list",
			"digest runs show 20261130-101500-3fa2c1 --format markdown",
			"digest runs show 20261130 --html report.html"),
	}
	var listFormat string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List past evaluation runs, newest first",
		Example: cmdutil.Example("digest runs list", "digest runs list --format json | jq -r '.[0].id'"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(report.RunFormats, listFormat) {
				return cmdutil.UsageError("--format %q: runs list writes %s", listFormat, strings.Join(report.RunFormats, ", "))
			}
			st, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context())
			if err != nil {
				return err
			}
			return writeRuns(f.IOStreams.Out, listFormat, runs)
		},
	}
	list.Flags().StringVarP(&listFormat, "format", "f", "table", "table, json, jsonl, csv or markdown")
	cmdutil.DocumentEnv(list.Flags())

	o := &EvalOptions{runDeps: newRunDeps(f)}
	show := &cobra.Command{
		Use:     "show RUN",
		Short:   "Show a past evaluation run's report",
		Long:    "Write the report of a past run, found by its id or a unique prefix of it, in any of eval's formats.",
		Example: cmdutil.Example("digest runs show 20261130-101500-3fa2c1", "digest runs show 20261130 --format csv -o results.csv"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Format != "" {
				if _, err := report.ForEvalFormat(o.Format); err != nil {
					return cmdutil.AsUsage(fmt.Errorf("--format: %w", err))
				}
			}
			if err := checkEvalOutputs(o, false, nil); err != nil {
				return err
			}
			st, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			run, ok, err := st.Run(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !ok {
				return cmdutil.UsageError("no single run matches %q. Try: digest runs list", args[0])
			}
			rep, err := eval.Report(cmd.Context(), st, run, nil)
			if err != nil {
				return err
			}
			return writeEvalReports(o, rep, false)
		},
	}
	show.Flags().StringVarP(&o.Format, "format", "f", "", "table (default on a terminal), json (default elsewhere), jsonl, csv, markdown")
	show.Flags().StringVarP(&o.Output, "output", "o", "", "write the report to this file instead of standard output")
	show.Flags().StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to this file")
	show.Flags().StringVar(&o.HTML, "html", "", "also write a self-contained HTML report to this file")
	cmdutil.DocumentEnv(show.Flags())
	cmd.AddCommand(list, show)
	return cmd
}

// writeRuns lists runs in one of report.RunFormats.
func writeRuns(w io.Writer, format string, runs []store.EvalRun) error {
	rows := make([]report.Run, 0, len(runs))
	for _, r := range runs {
		row := report.Run{ID: r.ID, Dataset: r.Dataset, Models: r.Models, Created: r.CreatedAt}
		if !r.FinishedAt.IsZero() {
			row.Finished = &r.FinishedAt
		}
		rows = append(rows, row)
	}
	return report.WriteRuns(w, format, rows)
}
