// Package pflagview lets a command line declare its flags on a standard
// library flag.FlagSet and parse them as kubectl, helm and istioctl do
// (github.com/spf13/pflag): long flags take two dashes, a few have a
// one-letter shorthand. Of lifts every declared flag into a pflag.FlagSet
// whose values write through the flag.FlagSet, so that its Visit keeps
// seeing what was given; WithDoubleDashes keeps the standard library's
// single-dash long form working.
package pflagview

import (
	"flag"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// ShorthandLongNames names the long flag a one-letter flag declaration
// stands for: -f is --filename, -o is --output, -n is --namespace, -A is
// --all-namespaces. When the long flag is declared too (--namespace), the
// letter becomes its shorthand.
var ShorthandLongNames = map[string]string{
	"f": "filename",
	"o": "output",
	"n": "namespace",
	"v": "verbose",
	"A": "all-namespaces",
	"R": "recursive",
}

// Of returns the pflag view of fs: it prints nothing (the caller prints one
// short error) and keeps the declaration order.
func Of(fs *flag.FlagSet) *pflag.FlagSet {
	pfs := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	pfs.SetOutput(io.Discard)
	pfs.Usage = func() {}
	pfs.SortFlags = false
	aliasOf := map[string]string{} // long name → its one-letter alias
	fs.VisitAll(func(gf *flag.Flag) {
		if long, ok := ShorthandLongNames[gf.Name]; ok && fs.Lookup(long) != nil {
			aliasOf[long] = gf.Name
		}
	})
	fs.VisitAll(func(gf *flag.Flag) {
		if long, ok := ShorthandLongNames[gf.Name]; ok && aliasOf[long] == gf.Name {
			return // set as the long flag's shorthand
		}
		pf := pflag.PFlagFromGoFlag(gf)
		pf.Value = &writeThrough{Value: pf.Value, fs: fs, name: gf.Name}
		if long, ok := ShorthandLongNames[gf.Name]; ok {
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

// WithDoubleDashes rewrites the standard library's single-dash long form
// (-installation FILE, -log-level=debug) to pflag's --installation, so every
// command line that worked before keeps working. Shorthands (-f, -ojson) and
// everything after "--" are left alone.
func WithDoubleDashes(args []string, pfs *pflag.FlagSet) []string {
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

// Repeated is a flag given once per value (--secret A --secret B); its
// help names the value as TypeName.
type Repeated struct {
	Values   []string
	TypeName string
}

// String is the values given, comma-separated.
func (r *Repeated) String() string { return strings.Join(r.Values, ",") }

// Set adds one value.
func (r *Repeated) Set(v string) error { r.Values = append(r.Values, v); return nil }

// Type names the value in the help (pflag).
func (r *Repeated) Type() string { return r.TypeName }
