package cmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/textsafe"
)

// ModelsOptions are the models command's flags and what it writes with.
type ModelsOptions struct {
	IO          *iostreams.IOStreams
	Globals     *cmdutil.Globals
	Format      string // table or json; "" picks by where the output goes
	ModelConfig string
	// Now is the day retirements are judged against.
	Now func() time.Time
}

// NewModelsCmd builds `digest models`: the built-in model table, read
// without any call.
func NewModelsCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ModelsOptions{IO: f.IOStreams, Globals: &f.Globals, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models digest knows: prices, limits, rules and retirements",
		Long: fmt.Sprintf(`List the built-in model table: for each OpenAI and Anthropic model, its price in
US dollars per million tokens (input, output, cached input, cache writes, and
through the batch API), its context window and output limit, the requests and
tokens per minute a new account starts with, the rules its API imposes on a
request, and when it retires and what replaces it. The table was read from the
providers' pricing, model, rate-limit and deprecation pages in %s.

--model-config shows the table with a models file's figures over it, as
summarize and eval would use them. Nothing is sent to any provider.`, models.SourceDate),
		Example: cmdutil.Example(
			"digest models",
			"digest models --format json | jq '.models[] | select(.status == \"active\") | .model'",
			"digest models --model-config models.json"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runModels(o) },
	}
	cmd.Flags().StringVarP(&o.Format, "format", "f", "", "table (default on a terminal) or json (default elsewhere)")
	cmd.Flags().StringVar(&o.ModelConfig, "model-config", "", "JSON file of per-model rpm, tpm, price, context and max_output, shown over the built-in table")
	cmdutil.DocumentEnv(cmd.Flags())
	return cmd
}

// modelRow is one model as digest models shows it.
type modelRow struct {
	Model      string        `json:"model"`
	Price      *models.Price `json:"price"` // null: digest knows no price
	BatchPrice *models.Price `json:"batch_price,omitempty"`
	Context    int           `json:"context"`
	MaxOutput  int           `json:"max_output"`
	RPM        int           `json:"rpm"`
	TPM        int           `json:"tpm"`
	Rules      string        `json:"rules"`
	Status     string        `json:"status"` // active, deprecated or retired
	Retired    string        `json:"retired,omitempty"`
	Successor  string        `json:"successor,omitempty"`
	Source     string        `json:"source"`
	// ModelConfig: the models file gives some of the row's figures.
	ModelConfig bool `json:"model_config,omitempty"`
}

// overrideNote says where an account's own figures go.
const overrideNote = "Your account's figures: --model-config FILE (here, and on summarize and eval), " +
	"--rpm and --tpm on summarize and eval, --price IN/OUT[/CACHED_IN[/CACHE_WRITE]] on summarize."

func runModels(o *ModelsOptions) error {
	if o.Format != "" && o.Format != "table" && o.Format != "json" {
		return cmdutil.UsageError("--format %q is neither table nor json. Try: --format json", o.Format)
	}
	var file models.File
	if o.ModelConfig != "" {
		var err error
		if file, err = models.LoadFile(o.ModelConfig); err != nil {
			return cmdutil.AsUsage(err)
		}
	}
	rows := modelRows(file, o.Now())
	format := o.Format
	if format == "" {
		format = "json"
		if o.IO.IsStdoutTTY() {
			format = "table"
		}
	}
	if format == "json" {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			SourceDate string     `json:"source_date"`
			Override   string     `json:"override"`
			Models     []modelRow `json:"models"`
		}{models.SourceDate, overrideNote, rows})
	}
	return writeModelsTable(o.IO.Out, rows, !o.Globals.Quiet)
}

// modelRows are the built-in table's models, each with the file's figures
// over it, then the models only the file names, in the file's order.
func modelRows(file models.File, now time.Time) []modelRow {
	var rows []modelRow
	seen := map[string]bool{}
	for _, r := range models.Table() {
		seen[r.Spec.String()] = true
		_, inFile := file[r.Spec.String()]
		rows = append(rows, rowOf(r.Spec, file.Lookup(r.Spec), inFile, now))
	}
	// Each provider's models served without a retirement first, then the
	// deprecated, then the retired, by name within each.
	rank := map[string]int{"active": 0, "deprecated": 1, "retired": 2}
	slices.SortStableFunc(rows, func(a, b modelRow) int {
		pa, _, _ := strings.Cut(a.Model, ":")
		pb, _, _ := strings.Cut(b.Model, ":")
		return cmp.Or(strings.Compare(pa, pb), rank[a.Status]-rank[b.Status])
	})
	for _, name := range slices.Sorted(maps.Keys(file)) {
		if seen[name] {
			continue
		}
		spec, err := provider.ParseSpec(name) // LoadFile checked every name
		if err != nil {
			continue
		}
		rows = append(rows, rowOf(spec, file.Lookup(spec), true, now))
	}
	return rows
}

func rowOf(spec provider.Spec, info models.Info, inFile bool, now time.Time) modelRow {
	row := modelRow{Model: spec.String(), Context: info.Context, MaxOutput: info.MaxOutput, RPM: info.RPM, TPM: info.TPM,
		Rules: provider.ProviderRules(spec).Summary(), Status: info.Status(now), Retired: info.Retired, Source: info.Source, ModelConfig: inFile}
	if row.Status == "" {
		row.Status = "active"
	}
	if info.Successor != "" {
		row.Successor = provider.Spec{Provider: spec.Provider, Model: info.Successor}.String()
	}
	if info.Known {
		p := info.Price
		row.Price = &p
		if b, ok := info.Batched(spec); ok {
			row.BatchPrice = &b
		}
	}
	if row.Source == "" {
		row.Source = "--model-config"
	}
	return row
}

// writeModelsTable writes the rows aligned, for a person at a terminal,
// between a line naming where the figures come from and one saying how to
// give one's own.
func writeModelsTable(w io.Writer, rows []modelRow, notes bool) error {
	if notes {
		fmt.Fprintf(w, "Models digest knows, read from the providers' pricing, model, rate-limit and deprecation pages in %s.\n", models.SourceDate)
		fmt.Fprintln(w, "Prices in US dollars per million tokens; limits are a new account's (the provider's first tier); - means learned from the provider.")
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tINPUT\tOUTPUT\tCACHED\tCACHE WRITE\tBATCH IN/OUT\tCONTEXT\tMAX OUT\tRPM\tTPM\tRETIREMENT\tRULES")
	for _, r := range rows {
		in, out, cached, write, batch := "?", "?", "-", "-", "-"
		if p := r.Price; p != nil {
			in, out = priceText(p.InputPerM), priceText(p.OutputPerM)
			if p.CachedInputPerM > 0 {
				cached = priceText(p.CachedInputPerM)
			}
			if p.CacheWritePerM > 0 {
				write = priceText(p.CacheWritePerM)
			}
		}
		if b := r.BatchPrice; b != nil {
			batch = priceText(b.InputPerM) + "/" + priceText(b.OutputPerM)
		}
		model := textsafe.Line(r.Model)
		if r.ModelConfig {
			model += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", model, in, out, cached, write, batch,
			tokenText(r.Context), tokenText(r.MaxOutput), limitText(r.RPM), limitText(r.TPM), retirementText(r), r.Rules)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if notes {
		fmt.Fprintln(w)
		if slices.ContainsFunc(rows, func(r modelRow) bool { return r.ModelConfig }) {
			fmt.Fprintln(w, "* with figures from --model-config.")
		}
		fmt.Fprintln(w, overrideNote)
	}
	return nil
}

// priceText is a price as the providers' pages write it: $2.50, $0.075.
func priceText(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if whole, frac, ok := strings.Cut(s, "."); ok && len(frac) == 1 {
		s = whole + "." + frac + "0"
	}
	return "$" + s
}

// tokenText is a token count in a few characters: 400K, 1.05M, 16.4K.
func tokenText(n int) string {
	short := func(v float64, digits int, unit string) string {
		s := strconv.FormatFloat(v, 'f', digits, 64)
		return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + unit
	}
	switch {
	case n <= 0:
		return "?"
	case n >= 1_000_000:
		return short(float64(n)/1e6, 2, "M")
	case n >= 1_000:
		return short(float64(n)/1e3, 1, "K")
	}
	return strconv.Itoa(n)
}

// limitText is a limit, or "-" when digest learns it from the provider.
func limitText(n int) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// retirementText is the table's word on when a model goes and what follows it.
func retirementText(r modelRow) string {
	var s string
	switch r.Status {
	case "retired":
		s = "retired " + r.Retired
	case "deprecated":
		s = "retires " + r.Retired
	default:
		return ""
	}
	if r.Successor != "" {
		s += ", then " + r.Successor
	}
	return s
}
