package cmd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/eval"
	"github.com/digest-cli/digest/internal/report"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/textsafe"
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
			if !slices.Contains(runFormats, listFormat) {
				return cmdutil.UsageError("--format %q: runs list writes %s", listFormat, strings.Join(runFormats, ", "))
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

	o := &EvalOptions{Factory: f}
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
			if err := checkEvalOutputs(f, o, false, nil); err != nil {
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
			return writeEvalReports(f, o, rep, false)
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

var runFormats = []string{"table", "json", "jsonl", "csv", "markdown"}

type runRow struct {
	ID       string     `json:"id"`
	Dataset  string     `json:"dataset"`
	Models   []string   `json:"models"`
	Created  time.Time  `json:"created_at"`
	Finished *time.Time `json:"finished_at"`
}

// writeRuns lists runs in one of runFormats.
func writeRuns(w io.Writer, format string, runs []store.EvalRun) error {
	rows := make([]runRow, 0, len(runs))
	for _, r := range runs {
		row := runRow{ID: r.ID, Dataset: r.Dataset, Models: r.Models, Created: r.CreatedAt}
		if !r.FinishedAt.IsZero() {
			row.Finished = &r.FinishedAt
		}
		rows = append(rows, row)
	}
	state := func(r runRow) string {
		if r.Finished == nil {
			return "incomplete"
		}
		return "finished"
	}
	switch format {
	case "json":
		return json.NewEncoder(w).Encode(rows)
	case "jsonl":
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"id", "started", "state", "dataset", "models"})
		for _, r := range rows {
			cw.Write([]string{r.ID, r.Created.UTC().Format(time.RFC3339), state(r), r.Dataset, strings.Join(r.Models, ",")})
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintln(w, "| run | started | state | dataset | models |\n|---|---|---|---|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", textsafe.MarkdownCode(r.ID), r.Created.UTC().Format("2006-01-02 15:04"), state(r),
				textsafe.MarkdownInline(r.Dataset), textsafe.MarkdownInline(strings.Join(r.Models, ", ")))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTATE\tDATASET\tMODELS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textsafe.Line(r.ID), r.Created.Local().Format("2006-01-02 15:04"), state(r),
			textsafe.Line(r.Dataset), textsafe.Line(strings.Join(r.Models, ",")))
	}
	return tw.Flush()
}
