package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Shell completion (cobra's __complete protocol): the subcommands, their
// flags, the values of the flags that take one of a few words (-o,
// --log-level, …) and files for the flags that read a manifest or a
// document. Every other flag value falls back to the shell's own (file)
// completion.

// completionValuesAnnotation holds a flag's values on its pflag view
// (flagSet.completeValues).
const completionValuesAnnotation = "dynamic-config/values"

// completionShells are the shells `completion` writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// fileFlagExtensions are the file flags whose completion offers only the
// files the flag reads (directories too, as the shells do).
var fileFlagExtensions = map[string][]string{
	"filename":     {"yaml", "yml", "json"},
	"installation": {"yaml", "yml", "json", "toml"},
	"rollout":      {"yaml", "yml", "json", "toml"},
	"values":       {"yaml", "yml"},
	"classes-file": {"yaml", "yml", "json"},
}

// addCompletions gives cmd its flags and what each completes to.
func addCompletions(cmd *cobra.Command, pfs *pflag.FlagSet) {
	cmd.Flags().AddFlagSet(pfs)
	pfs.VisitAll(func(pf *pflag.Flag) {
		values, ok := pf.Annotations[completionValuesAnnotation]
		if !ok {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(pf.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	})
}

// runCompletion is `dynamic-config completion bash|zsh|fish`.
func runCompletion(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("completion", stderr)
	fs.positional = 1
	var g globalFlags
	g.register(fs, "text")
	if _, code, done := parseArgs(fs, &g, args, stderr); done {
		return code
	}
	if len(fs.args) != 1 {
		fmt.Fprintf(stderr, "completion: name the shell: bash, zsh or fish\nSee 'dynamic-config completion --help'.\n")
		return exitUsage
	}
	var code int
	root := newRootCommand(nil, stdin, stdout, stderr, &code)
	var err error
	switch fs.args[0] {
	case "bash":
		err = root.GenBashCompletionV2(stdout, true)
	case "zsh":
		err = root.GenZshCompletion(stdout)
	case "fish":
		err = root.GenFishCompletion(stdout, true)
	default:
		fmt.Fprintf(stderr, "completion: %q is not a shell this writes a script for: bash, zsh or fish\n", fs.args[0])
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "completion: write the script: %v\n", err)
		return exitUsage
	}
	return exitOK
}
