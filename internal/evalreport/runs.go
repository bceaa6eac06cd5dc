package evalreport

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/digest-cli/digest/internal/textsafe"
)

// RunFormats are the formats `digest runs list` writes.
var RunFormats = []string{"table", "json", "jsonl", "csv", "markdown"}

// Run is one eval run as `digest runs list` shows it.
type Run struct {
	ID       string     `json:"id"`
	Dataset  string     `json:"dataset"`
	Models   []string   `json:"models"`
	Created  time.Time  `json:"created_at"`
	Finished *time.Time `json:"finished_at"` // nil while incomplete
	// Accuracy is each model's accuracy, as its report gives it; a model
	// without results is left out.
	Accuracy map[string]float64 `json:"accuracy"`
	// RerunOf names the earlier run this one repeated from the cache: the
	// same dataset, models and parameters, every result cached.
	RerunOf string `json:"rerun_of,omitempty"`
}

// modelsText lists the models with their accuracies: "a 90.0%, b 50.0%".
func (r Run) modelsText() string {
	parts := make([]string, len(r.Models))
	for i, m := range r.Models {
		parts[i] = m
		if acc, ok := r.Accuracy[m]; ok {
			parts[i] += " " + percent(acc)
		}
	}
	return strings.Join(parts, ", ")
}

// rerunText is RerunOf for people, "–" for an original run.
func (r Run) rerunText() string {
	if r.RerunOf == "" {
		return "–"
	}
	return r.RerunOf
}

func (r Run) state() string {
	if r.Finished == nil {
		return "incomplete"
	}
	return "finished"
}

// WriteRuns lists runs in one of RunFormats: a table for people, the
// others for machines and pages, each showing untrusted names as text.
func WriteRuns(w io.Writer, format string, runs []Run) error {
	if runs == nil {
		runs = []Run{}
	}
	switch format {
	case "json":
		return json.NewEncoder(w).Encode(runs)
	case "jsonl":
		enc := json.NewEncoder(w)
		for _, r := range runs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"id", "started", "state", "dataset", "models", "accuracy", "rerun_of"})
		for _, r := range runs {
			acc := make([]string, len(r.Models))
			for i, m := range r.Models {
				if a, ok := r.Accuracy[m]; ok {
					acc[i] = decimal(a)
				}
			}
			cw.Write([]string{r.ID, r.Created.UTC().Format(time.RFC3339), r.state(), r.Dataset, strings.Join(r.Models, ","), strings.Join(acc, ","), r.RerunOf})
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintln(w, "| run | started | state | dataset | models (accuracy) | rerun of |\n|---|---|---|---|---|---|")
		for _, r := range runs {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", textsafe.MarkdownCode(r.ID), r.Created.UTC().Format("2006-01-02 15:04"), r.state(),
				textsafe.MarkdownInline(r.Dataset), textsafe.MarkdownInline(r.modelsText()), textsafe.MarkdownInline(r.rerunText()))
		}
		return nil
	case "table", "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTARTED\tSTATE\tDATASET\tMODELS (ACCURACY)\tRERUN OF")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", textsafe.Line(r.ID), r.Created.Local().Format("2006-01-02 15:04"), r.state(),
				textsafe.Line(r.Dataset), textsafe.Line(r.modelsText()), textsafe.Line(r.rerunText()))
		}
		return tw.Flush()
	}
	return fmt.Errorf("runs list writes %s, not %q", strings.Join(RunFormats, ", "), format)
}
