package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynamic-config-admission/dynamic-config/internal/prose"
)

// run runs the command line and returns the exit code: the command tree
// (cobra) of the subcommands of main.go, --version, `completion bash|zsh|fish` and the shells' __complete hook.
// Each subcommand parses its own flags (flags.go, pflag), so cobra hands it
// the arguments as they are.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitOK
	root := newRootCommand(args, stdin, stdout, stderr, &code)
	if msg, ok := unknownCommand(root, args); ok {
		fmt.Fprintf(stderr, "dynamic-config: %s\nSee 'dynamic-config --help'.\n", msg)
		return exitUsage
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "dynamic-config: %s\nSee 'dynamic-config --help'.\n", shortError(err))
		return exitUsage
	}
	return code
}

// newRootCommand builds the tree; code receives the subcommand's exit code.
func newRootCommand(args []string, stdin io.Reader, stdout, stderr io.Writer, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:           "dynamic-config",
		Short:         "dynamic-config admission: the gRPC decider, the admission front door and the offline doors",
		Version:       binaryVersion(),
		SilenceErrors: true,
		// "did you mean": a typo of one or two letters, or a prefix
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		Args:                       cobra.NoArgs,
		// completion is a subcommand of ours (completion.go): one help
		// style, and only the shells the usage names
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		// Without a subcommand: the usage on stderr, exit 2 (spec 07 §1).
		Run: func(c *cobra.Command, _ []string) {
			usage(stderr)
			*code = exitUsage
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("dynamic-config {{.Version}}\n")
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if sc, ok := subcommands[commandName(c)]; ok && c != root {
			// `dynamic-config help inject`: the subcommand's own --help
			sc.run([]string{"--help"}, stdin, stdout, stderr)
			return
		}
		if c == root {
			usage(stdout)
			return
		}
		if c.HasSubCommands() {
			groupUsage(stdout, c.Name())
			return
		}
		fmt.Fprint(stdout, c.UsageString())
	})
	completing := len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd)
	for _, name := range subcommandNames() {
		sc := subcommands[name]
		parent, verb := root, name
		if group, v, ok := strings.Cut(name, " "); ok {
			parent, verb = groupCommand(root, group, stderr, code), v
		}
		cmd := &cobra.Command{
			Use:                verb,
			Short:              sc.summary,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				*code = sc.run(args, stdin, stdout, stderr)
				return nil
			},
		}
		if name == "completion" {
			cmd.ValidArgs = completionShells
		}
		if completing {
			// the flags are only needed to complete them; cobra completes
			// flag values only for a command whose flags it parses (the
			// command is not run while completing)
			if pfs := describeFlags(name, sc); pfs != nil {
				addCompletions(cmd, pfs)
				cmd.DisableFlagParsing = false
			}
		}
		parent.AddCommand(cmd)
	}
	return root
}

// groupCommand is the command of a group of subcommands ("rollout" of
// "rollout status"), made on first use: without a verb it prints the
// group's verbs on stderr and exits 2, as the root does without a
// subcommand.
func groupCommand(root *cobra.Command, group string, stderr io.Writer, code *int) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == group {
			return c
		}
	}
	c := &cobra.Command{
		Use:   group,
		Short: groupSummaries[group],
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			groupUsage(stderr, group)
			*code = exitUsage
		},
	}
	root.AddCommand(c)
	return c
}

// commandName is the subcommand's name as the command table has it:
// "inject", or a group's "rollout status".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// groupUsage lists the verbs of a group of subcommands.
func groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: dynamic-config %s <verb> [flags]\n\n%s.\n\n", group, capitalized(groupSummaries[group]))
	for _, name := range subcommandNames() {
		if verb, ok := strings.CutPrefix(name, group+" "); ok {
			fmt.Fprintf(w, "  %-20s %s\n", verb, subcommands[name].summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'dynamic-config %s <verb> --help' for a verb's flags.\n", group)
}

// unknownCommand reports a first argument that names no subcommand, with
// the subcommands it may be a misspelling of. A flag (--help, --version) or
// cobra's own commands (help, __complete) are left to cobra.
func unknownCommand(root *cobra.Command, args []string) (msg string, unknown bool) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", false
	}
	name := args[0]
	_, group := groupSummaries[name]
	if _, ok := subcommands[name]; ok || group || name == "help" || strings.HasPrefix(name, cobra.ShellCompRequestCmd) {
		return "", false
	}
	msg = fmt.Sprintf("unknown command %q", name)
	if suggestions := root.SuggestionsFor(name); len(suggestions) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", prose.Join(quoted(suggestions), "or"))
	}
	return msg, true
}

func quoted(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strconv.Quote(w)
	}
	return out
}

// shortError is cobra's error without the "for \"dynamic-config …\"" tail.
func shortError(err error) string {
	s, _, _ := strings.Cut(err.Error(), ` for "dynamic-config`)
	return s
}

func subcommandNames() []string {
	names := make([]string, 0, len(subcommands))
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// usage lists the subcommands and the root's flags.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dynamic-config <subcommand> [flags]")
	fmt.Fprintln(w, "")
	for _, name := range subcommandNames() {
		fmt.Fprintf(w, "  %-20s %s\n", name, subcommands[name].summary)
	}
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "  --version            prints the version")
	fmt.Fprintln(w, "Run 'dynamic-config <subcommand> --help' for a subcommand's flags.")
}
