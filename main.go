// Command digest summarizes git history and evaluates prompts with LLMs,
// in batches, under rate limits, paying for each result once.
package main

import (
	"os"

	"github.com/digest-cli/digest/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
