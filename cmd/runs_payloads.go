package cmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store"
)

// runPayload is what `digest runs payloads` writes of one result: its
// place in the run, where its bodies are, and the bodies.
type runPayload struct {
	Model       string          `json:"model"`
	Line        int             `json:"line"`
	Repeat      int             `json:"repeat"`
	Key         string          `json:"key"`
	RequestURI  string          `json:"request_uri,omitempty"`
	ResponseURI string          `json:"response_uri,omitempty"`
	Request     json.RawMessage `json:"request"`
	Response    string          `json:"response"`
}

// newRunsPayloadsCmd builds `digest runs payloads RUN LINE`: the raw
// request and response of a run's results on one dataset line, read from
// the object store --payloads names or from the database, wherever they
// are.
func newRunsPayloadsCmd(f *cmdutil.Factory) *cobra.Command {
	var model string
	var repeat int
	cmd := &cobra.Command{
		Use:   "payloads RUN LINE",
		Short: "Print the raw request and response of a run's results on one line",
		Long: `Print, as JSON lines, the request digest sent and the response it stored for
each model's result on dataset line LINE of run RUN: from the object store
--payloads names when the run kept them there, else from the database.`,
		Example: cmdutil.Example("digest runs payloads 20261130 3",
			"digest runs payloads 20261130 3 --model openai:gpt-4o-mini --payloads 's3://lake/digest?region=eu-west-1'"),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			line, err := strconv.Atoi(args[1])
			if err != nil || line < 1 {
				return cmdutil.UsageError("LINE %q is not a dataset line number. Try: digest runs payloads %s 1", args[1], args[0])
			}
			ctx := cmd.Context()
			st, err := f.OpenExisting(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			ps, ok := st.(payloadStore)
			if !ok {
				return fmt.Errorf("database %s keeps no payloads digest can read", st.Path())
			}
			run, found, err := st.Run(ctx, args[0])
			if err != nil {
				return err
			}
			if !found {
				return cmdutil.UsageError("no run %q in %s. Try: digest runs list", args[0], st.Path())
			}
			models := run.Models
			if model != "" {
				models = []string{model}
			}
			var bucket *payloads.Bucket
			enc := json.NewEncoder(f.IOStreams.Out)
			n := 0
			for row, err := range st.RunRows(ctx, run.ID, models, false) {
				if err != nil {
					return err
				}
				if row.Line != line || cmd.Flags().Changed("repeat") && row.Repeat != repeat {
					continue
				}
				rq, rs, ok, err := ps.ResultPayloads(ctx, row.Key)
				if err != nil {
					return err
				}
				if !ok {
					continue // an error, never answered
				}
				if (rq.URI != "" || rs.URI != "") && bucket == nil {
					if f.Globals.Payloads == "" {
						return cmdutil.UsageError("run %s keeps its payloads in an object store (%s). Try: --payloads with that store's URL", run.ID, cmp.Or(rq.URI, rs.URI))
					}
					if bucket, err = openPayloads(ctx, f.Globals.Payloads); err != nil {
						return err
					}
					defer bucket.Close()
				}
				out := runPayload{Model: row.Model, Line: row.Line, Repeat: row.Repeat, Key: row.Key, RequestURI: rq.URI, ResponseURI: rs.URI}
				for _, p := range []*store.Payload{&rq, &rs} {
					if p.URI != "" {
						if p.Body, err = bucket.Get(ctx, p.URI); err != nil {
							return err
						}
					}
				}
				out.Request, out.Response = rq.Body, string(rs.Body)
				if !json.Valid(out.Request) {
					out.Request, _ = json.Marshal(string(rq.Body))
				}
				if err := enc.Encode(out); err != nil {
					return err
				}
				n++
			}
			if n == 0 {
				return cmdutil.UsageError("run %s has no answered result on line %d. Try: digest runs show %s", run.ID, line, run.ID)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "only this model's result (default: every model's)")
	cmd.Flags().IntVar(&repeat, "repeat", 0, "only this repeat (default: every repeat)")
	cmdutil.DocumentEnv(cmd.Flags())
	return cmd
}
