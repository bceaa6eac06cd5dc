package cmd

import (
	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
)

// NewCompletionCmd writes shell completion scripts.
func NewCompletionCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell to standard output.

Load it in the current shell, or save it where your shell loads completions
from, as in the examples.`,
		Example: cmdutil.Example(
			"source <(digest completion bash)",
			"digest completion zsh > \"${fpath[1]}/_digest\"",
			"digest completion fish > ~/.config/fish/completions/digest.fish",
			"digest completion powershell | Out-String | Invoke-Expression"),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), f.IOStreams.Out
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			default:
				return root.GenPowerShellCompletionWithDesc(out)
			}
		},
	}
}
