package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// runCommandLine is the command tree (cobra): the subcommands of main.go,
// --version, `completion bash|zsh|fish` and the shells' __complete hook.
// Each subcommand parses its own flags (flags.go, pflag), so cobra hands it
// the arguments as they are.
func runCommandLine(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitOK
	root := newRootCommand(args, stdin, stdout, stderr, &code)
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
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
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
		if sc, ok := subcommands[c.Name()]; ok && c != root {
			// `dynamic-config help inject`: the subcommand's own --help
			sc.run([]string{"--help"}, stdin, stdout, stderr)
			return
		}
		if c == root {
			usage(stdout)
			return
		}
		fmt.Fprint(stdout, c.UsageString())
	})
	completing := len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd)
	for _, name := range subcommandNames() {
		sc := subcommands[name]
		cmd := &cobra.Command{
			Use:                name,
			Short:              sc.summary,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				*code = sc.run(args, stdin, stdout, stderr)
				return nil
			},
		}
		if completing {
			// the flags are only needed to complete them
			if pfs := describeFlags(name, sc); pfs != nil {
				cmd.Flags().AddFlagSet(pfs)
			}
		}
		root.AddCommand(cmd)
	}
	return root
}

// shortError is cobra's error without the "for \"dynamic-config\"" tail.
func shortError(err error) string {
	s, _, _ := strings.Cut(err.Error(), ` for "dynamic-config"`)
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
	fmt.Fprintf(w, "  %-20s %s\n", "completion", "prints a shell completion script: bash, zsh or fish")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "  --version            prints the version")
	fmt.Fprintln(w, "Run 'dynamic-config <subcommand> --help' for a subcommand's flags.")
}
