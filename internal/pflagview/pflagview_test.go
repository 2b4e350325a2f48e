package pflagview

import (
	"flag"
	"slices"
	"testing"
)

func declared() *flag.FlagSet {
	fs := flag.NewFlagSet("inject", flag.ContinueOnError)
	fs.String("namespace", "", "")
	fs.String("n", "", "") // the shorthand of --namespace
	fs.String("o", "", "") // -o stands for --output
	fs.String("installation", "", "")
	return fs
}

func TestTheStandardLibrarysSingleDashLongFormKeepsWorking(t *testing.T) {
	pfs := Of(declared())
	tests := []struct {
		name       string
		args, want []string
	}{
		{"a single-dash long flag gets its second dash", []string{"-installation", "doc.yaml"}, []string{"--installation", "doc.yaml"}},
		{"with its value after an equals sign too", []string{"-installation=doc.yaml"}, []string{"--installation=doc.yaml"}},
		{"a shorthand is left alone", []string{"-ojson", "-n", "shop"}, []string{"-ojson", "-n", "shop"}},
		{"an undeclared name is left for pflag to refuse", []string{"-bogus"}, []string{"-bogus"}},
		{"nothing after -- is touched", []string{"--", "-installation"}, []string{"--", "-installation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithDoubleDashes(tt.args, pfs); !slices.Equal(got, tt.want) {
				t.Errorf("WithDoubleDashes(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestALetterIsTheShorthandOfItsLongFlagAndAGivenFlagIsSeenByTheStandardLibrary(t *testing.T) {
	fs := declared()
	pfs := Of(fs)
	if err := pfs.Parse([]string{"-n", "shop", "--output", "json"}); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("namespace").Value.String(); got != "shop" {
		t.Errorf("-n set --namespace to %q, want shop", got)
	}
	if got := fs.Lookup("o").Value.String(); got != "json" {
		t.Errorf("--output set -o to %q, want json", got)
	}
	var given []string
	fs.Visit(func(f *flag.Flag) { given = append(given, f.Name) })
	if want := []string{"namespace", "o"}; !slices.Equal(given, want) {
		t.Errorf("the flag set saw %q given, want %q", given, want)
	}
}

func TestARepeatedFlagKeepsEveryValueInOrder(t *testing.T) {
	r := Repeated{TypeName: "NAME"}
	for _, v := range []string{"a", "b", "a"} {
		if err := r.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(r.Values, []string{"a", "b", "a"}) || r.String() != "a,b,a" || r.Type() != "NAME" {
		t.Errorf("Repeated = %+v (String %q, Type %q)", r, r.String(), r.Type())
	}
}
