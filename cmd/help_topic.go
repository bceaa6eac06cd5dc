package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/help"
)

// addHelpTopics adds a hidden command per help topic, so that `digest help
// TOPIC` (and `digest TOPIC --help`) shows the page, and lists the topics
// at the end of `digest help`.
func addHelpTopics(f *cmdutil.Factory, root *cobra.Command) {
	var list strings.Builder
	list.WriteString("\nHelp topics (digest help TOPIC):\n")
	for _, t := range help.Topics() {
		fmt.Fprintf(&list, "  %-14s %s\n", t.Name, t.Short)
		c := &cobra.Command{Use: t.Name, Short: t.Short, Hidden: true, Annotations: map[string]string{"help:topic": "true"}}
		c.SetHelpFunc(func(c *cobra.Command, _ []string) {
			if err := showTopic(f, t.Name); err != nil {
				fmt.Fprintf(f.IOStreams.ErrOut, "digest: %v\n", err)
			}
		})
		c.RunE = func(c *cobra.Command, _ []string) error { return showTopic(f, t.Name) }
		root.AddCommand(c)
	}
	root.SetHelpTemplate(root.HelpTemplate() + `{{if not .HasParent}}` + list.String() + `{{end}}`)
}

// showTopic writes a topic's page: laid out for a terminal (in colour
// unless NO_COLOR is set), the Markdown itself for a pipe or a file.
func showTopic(f *cmdutil.Factory, name string) error {
	md, err := help.Markdown(name)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	ios := f.IOStreams
	if !ios.IsStdoutTTY() {
		_, err = fmt.Fprint(ios.Out, md)
		return err
	}
	page, err := help.Render(md, ios.TerminalWidth(), f.Getenv("NO_COLOR") == "")
	if err != nil {
		return fmt.Errorf("help %s: %w", name, err)
	}
	_, err = fmt.Fprint(ios.StyledOut(), page)
	return err
}

// newHelpCmd is `digest help [COMMAND | TOPIC]`: cobra's own, but a name
// that is neither is a usage error (exit 2), not the root's help.
func newHelpCmd(f *cmdutil.Factory, root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:     "help [command | topic]",
		Short:   "Help about any command, or a topic of the manual",
		Example: cmdutil.Example("digest help summarize", "digest help datasets"),
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return cmdutil.UsageError("no command or help topic %q. Try: digest help, which lists both", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}
