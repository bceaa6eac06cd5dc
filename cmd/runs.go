package cmd

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/eval"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/store"
)

// NewRunsCmd builds `digest runs`: past evaluation runs, read back from the
// store without any call.
func NewRunsCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, show and prune past evaluation runs",
		Long:  "Read past digest eval runs back from the database, without sending anything, and remove old ones.",
		Example: cmdutil.Example(
			"digest runs list",
			"digest runs show 20261130-101500-3fa2c1 --format markdown",
			"digest runs show 20261130 --html report.html",
			"digest runs prune --keep 20"),
	}
	var listFormat string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List past evaluation runs, newest first",
		Example: cmdutil.Example("digest runs list", "digest runs list --format json | jq -r '.[0].id'"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(evalreport.RunFormats, listFormat) {
				return cmdutil.UsageError("--format %q: runs list writes %s", listFormat, strings.Join(evalreport.RunFormats, ", "))
			}
			if missing := missingDatabase(f); missing != "" {
				f.Infof("digest: %s", missing)
				return evalreport.WriteRuns(f.IOStreams.Out, listFormat, nil)
			}
			st, err := f.OpenExisting(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context())
			if err != nil {
				return err
			}
			rows, err := runRows(cmd.Context(), st, runs)
			if err != nil {
				return err
			}
			return evalreport.WriteRuns(f.IOStreams.Out, listFormat, rows)
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
				if _, err := evalreport.ForEvalFormat(o.Format); err != nil {
					return cmdutil.AsUsage(fmt.Errorf("--format: %w", err))
				}
			}
			if err := checkEvalOutputs(o, false, nil); err != nil {
				return err
			}
			if missing := missingDatabase(f); missing != "" {
				return cmdutil.UsageError("%s", missing)
			}
			st, err := f.OpenExisting(cmd.Context(), false)
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
			if run.FinishedAt.IsZero() {
				// An interrupted run's report holds only what was stored
				// before the stop: a part must not pass for the whole.
				f.Infof("digest: run %s is incomplete (interrupted, or still running): the report holds only the results stored so far. Try: the same digest eval command again, to finish it as a new run", run.ID)
			}
			return writeEvalReports(o, rep, false)
		},
	}
	show.Flags().StringVarP(&o.Format, "format", "f", "", "table (default on a terminal), json (default elsewhere), jsonl, csv, markdown")
	show.Flags().StringVarP(&o.Output, "output", "o", "", "write the report to this file instead of standard output")
	show.Flags().StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to this file")
	show.Flags().StringVar(&o.HTML, "html", "", "also write a self-contained HTML report to this file")
	cmdutil.DocumentEnv(show.Flags())
	cmd.AddCommand(list, show, newRunsPruneCmd(f), newRunsPayloadsCmd(f))
	return cmd
}

// missingDatabase says why there is nothing to read when --db names a file
// that does not exist, or "". Opening it would create it: a typo would
// leave an empty database behind, and show no runs as if there were none.
func missingDatabase(f *cmdutil.Factory) string {
	path := f.MissingDB()
	if path == "" {
		return ""
	}
	return fmt.Sprintf("no database at %s, so no runs: digest eval has not run with it. Try: --db with the file digest eval wrote to (default %s)", path, cmdutil.DefaultDB())
}

// runRows are the runs as runs list shows them, newest first: each
// model's accuracy from the run's report, and, for a run every result of
// which came from the cache, the earlier run it repeated.
func runRows(ctx context.Context, st store.Store, runs []store.EvalRun) ([]evalreport.Run, error) {
	rows := make([]evalreport.Run, len(runs))
	cachedOnly := make([]bool, len(runs))
	figures := make([]string, len(runs))
	for i, r := range runs {
		rows[i] = evalreport.Run{ID: r.ID, Dataset: r.Dataset, Models: r.Models, Created: r.CreatedAt, Accuracy: map[string]float64{}}
		if !r.FinishedAt.IsZero() {
			rows[i].Finished = &r.FinishedAt
		}
		rep, err := eval.Report(ctx, st, r, nil)
		if err != nil {
			return nil, err
		}
		cachedOnly[i] = len(rep.Models) > 0
		for _, m := range rep.Models {
			checked := m.Items - m.Unchecked
			if checked > 0 {
				rows[i].Accuracy[m.Model] = m.Accuracy
			}
			cachedOnly[i] = cachedOnly[i] && checked > 0 && m.Cached == checked
			// What the run found: a run with other assertions, another
			// --limit or an edited dataset scores otherwise, and is no rerun.
			figures[i] += fmt.Sprintf("%s %d %d %d %d %v;", m.Model, m.Items, m.Passed, m.Errors, m.Unchecked, m.ResultAccuracy)
		}
	}
	// Newest first: a rerun's original is further down the list, and is
	// itself the original when it is no rerun.
	for i := len(runs) - 1; i >= 0; i-- {
		if !cachedOnly[i] || rows[i].Finished == nil {
			continue
		}
		for j := i + 1; j < len(runs); j++ {
			if sameRun(runs[i], runs[j]) && figures[i] == figures[j] && rows[j].Finished != nil {
				rows[i].RerunOf = cmp.Or(rows[j].RerunOf, runs[j].ID)
				break
			}
		}
	}
	return rows, nil
}

// sameRun tells whether two runs asked the same: dataset, models and
// parameters.
func sameRun(a, b store.EvalRun) bool {
	return a.Dataset == b.Dataset && slices.Equal(a.Models, b.Models) && reflect.DeepEqual(a.Params, b.Params)
}
