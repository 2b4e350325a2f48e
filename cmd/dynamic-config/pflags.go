package main

import (
	"flag"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line follows kubectl, helm and istioctl (pflag): long flags
// take two dashes, a few have a one-letter shorthand, and the subcommands
// keep declaring their flags on a standard library flag.FlagSet (flags.go).
// pflagsOf is the thin adapter between the two: it lifts every declared flag
// into a pflag.FlagSet whose values write through the flag.FlagSet, so that
// Visit, isSet and the environment bindings keep seeing what was given.

// shorthandLongNames names the long flag a one-letter flag declaration
// stands for: -f is --filename, -o is --output, -n is --namespace, -A is
// --all-namespaces. When the long flag is declared too (--namespace), the
// letter becomes its shorthand.
var shorthandLongNames = map[string]string{
	"f": "filename",
	"o": "output",
	"n": "namespace",
	"v": "verbose",
	"A": "all-namespaces",
}

// pflags returns the pflag view of the flag set, with what shell completion
// offers for each flag (completion.go).
func (f *flagSet) pflags() *pflag.FlagSet {
	pfs := pflagsOf(f.FlagSet)
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

// pflagsOf returns the pflag view of fs.
func pflagsOf(fs *flag.FlagSet) *pflag.FlagSet {
	pfs := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	pfs.SetOutput(io.Discard) // the caller prints one short error
	pfs.Usage = func() {}
	pfs.SortFlags = false
	aliasOf := map[string]string{} // long name → its one-letter alias
	fs.VisitAll(func(gf *flag.Flag) {
		if long, ok := shorthandLongNames[gf.Name]; ok && fs.Lookup(long) != nil {
			aliasOf[long] = gf.Name
		}
	})
	fs.VisitAll(func(gf *flag.Flag) {
		if long, ok := shorthandLongNames[gf.Name]; ok && aliasOf[long] == gf.Name {
			return // set as the long flag's shorthand
		}
		pf := pflag.PFlagFromGoFlag(gf)
		pf.Value = &writeThrough{Value: pf.Value, fs: fs, name: gf.Name}
		if long, ok := shorthandLongNames[gf.Name]; ok {
			pf.Name, pf.Shorthand = long, gf.Name
		}
		if short, ok := aliasOf[gf.Name]; ok {
			pf.Shorthand = short
		}
		pfs.AddFlag(pf)
	})
	return pfs
}

// writeThrough sets a flag through its flag.FlagSet, which records it as
// given (flag.FlagSet.Visit).
type writeThrough struct {
	pflag.Value
	fs   *flag.FlagSet
	name string
}

func (w *writeThrough) Set(s string) error { return w.fs.Set(w.name, s) }

// withDoubleDashes rewrites the standard library's single-dash long form
// (-installation FILE, -log-level=debug) to pflag's --installation, so every
// command line that worked before keeps working. Shorthands (-f, -ojson) and
// everything after "--" are left alone.
func withDoubleDashes(args []string, pfs *pflag.FlagSet) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && pfs.Lookup(name) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
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

// repeated is a flag given once per value (--secret A --secret B); its
// help names the value as typeName.
type repeated struct {
	values   []string
	typeName string
}

func (r *repeated) String() string     { return strings.Join(r.values, ",") }
func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }

// Type names the value in the help (pflag).
func (r *repeated) Type() string { return r.typeName }
