package main

import (
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynamic-config-admission/dynamic-config/internal/pflagview"
)

// The command line follows kubectl, helm and istioctl (pflag): the
// subcommands declare their flags on a standard library flag.FlagSet
// (flags.go) and internal/pflagview lifts them into pflag's.

// pflags returns the pflag view of the flag set, with what shell completion
// offers for each flag (completion.go).
func (f *flagSet) pflags() *pflag.FlagSet {
	pfs := pflagview.Of(f.FlagSet)
	pfs.VisitAll(func(pf *pflag.Flag) {
		values, ok := f.values[pf.Name]
		if !ok && pf.Shorthand != "" {
			values, ok = f.values[pf.Shorthand]
		}
		switch {
		case ok:
			_ = pfs.SetAnnotation(pf.Name, completionValuesAnnotation, values)
		case len(fileFlagExtensions[pf.Name]) > 0:
			_ = pfs.SetAnnotation(pf.Name, cobra.BashCompFilenameExt, fileFlagExtensions[pf.Name])
		}
	})
	return pfs
}

// describeArg asks a subcommand for its flags instead of running it: parse
// records the pflag view under the subcommand's name and stops as for
// --help, printing nothing. Shell completion uses it.
const describeArg = "\x00describe-flags"

var described = struct {
	sync.Mutex
	flags map[string]*pflag.FlagSet
}{flags: map[string]*pflag.FlagSet{}}

// describeFlags returns the flags subcommand name declares (nil if none).
func describeFlags(name string, cmd subcommand) *pflag.FlagSet {
	cmd.run([]string{describeArg}, strings.NewReader(""), io.Discard, io.Discard)
	described.Lock()
	defer described.Unlock()
	return described.flags[name]
}

func recordDescribed(name string, pfs *pflag.FlagSet) {
	described.Lock()
	defer described.Unlock()
	described.flags[name] = pfs
}
