package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
	"github.com/dynamic-config-admission/dynamic-config/internal/pflagview"
)

// lookupEnvVar reads one process environment variable (tests replace it).
var lookupEnvVar = os.LookupEnv

// flagSet is one subcommand's flags (spec 07: one FlagSet per subcommand).
// A flag bound to an environment variable takes the variable's value unless
// the flag is given: flag > environment > default.
type flagSet struct {
	*flag.FlagSet
	name string
	env  []envBinding
	// values are the values shell completion offers for a flag.
	values map[string][]string
	// positional is how many arguments the command takes (completion: 1).
	positional int
	// args are the positional arguments parse found.
	args []string
}

// envBinding ties a flag to its environment variable.
type envBinding struct {
	flag, variable string
	// emptyIsUnset: an empty variable is ignored (every non-string flag);
	// for a string flag an empty variable is an empty value.
	emptyIsUnset bool
	// want says what the variable accepts, for the error message ("" = any text).
	want string
}

// newFlagSet returns the flag set of subcommand name, writing usage to stderr.
func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flagSet{FlagSet: fs, name: name}
}

// completeValues makes shell completion offer values for flag name.
func (f *flagSet) completeValues(name string, values ...string) {
	if f.values == nil {
		f.values = map[string][]string{}
	}
	f.values[name] = values
}

func (f *flagSet) bind(name, variable string, emptyIsUnset bool, want string) {
	if variable != "" {
		f.env = append(f.env, envBinding{flag: name, variable: variable, emptyIsUnset: emptyIsUnset, want: want})
	}
}

// stringVar defines a string flag with an optional environment variable ("" = none).
func (f *flagSet) stringVar(p *string, name, variable, value, usage string) {
	f.StringVar(p, name, value, withVariable(usage, variable))
	f.bind(name, variable, false, "")
}

// boolVar defines a bool flag; the variable accepts 1/true and 0/false.
func (f *flagSet) boolVar(p *bool, name, variable string, value bool, usage string) {
	f.BoolVar(p, name, value, withVariable(usage, variable))
	f.bind(name, variable, true, "want 1, true, 0 or false")
}

// durationVar defines a duration flag.
func (f *flagSet) durationVar(p *time.Duration, name, variable string, value time.Duration, usage string) {
	f.DurationVar(p, name, value, withVariable(usage, variable))
	f.bind(name, variable, true, "want a duration such as 10s")
}

// float64Var defines a float64 flag.
func (f *flagSet) float64Var(p *float64, name, variable string, value float64, usage string) {
	f.Float64Var(p, name, value, withVariable(usage, variable))
	f.bind(name, variable, true, "want a number")
}

// int64Var defines an int64 flag.
func (f *flagSet) int64Var(p *int64, name, variable string, value int64, usage string) {
	f.Int64Var(p, name, value, withVariable(usage, variable))
	f.bind(name, variable, true, "want a whole number")
}

func withVariable(usage, variable string) string {
	if variable == "" {
		return usage
	}
	return usage + " ($" + variable + ")"
}

// errHelp is returned by parse for -h/--help: print usage, exit 0.
var errHelp = flag.ErrHelp

// errUsage is returned by parse after the problem was printed.
var errUsage = errors.New("usage error")

// parse parses args (pflag, see pflags.go), then applies the environment to
// every flag not given. A value the flag rejects names the variable. Every
// error but errHelp has been printed to the flag set's output: one short line
// and where to find the help.
func (f *flagSet) parse(args []string) error {
	pfs := f.pflags()
	if len(args) == 1 && args[0] == describeArg {
		recordDescribed(f.name, pfs)
		return errHelp
	}
	if err := pfs.Parse(pflagview.WithDoubleDashes(args, pfs)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			f.printUsage()
			return errHelp
		}
		fmt.Fprintf(f.Output(), "%s: %v\nSee 'dynamic-config %s --help'.\n", f.name, err, f.name)
		return errUsage
	}
	if pfs.NArg() > f.positional {
		fmt.Fprintf(f.Output(), "%s: unexpected argument %q\nSee 'dynamic-config %s --help'.\n", f.name, pfs.Arg(f.positional), f.name)
		return errUsage
	}
	f.args = pfs.Args()
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, b := range f.env {
		if given[b.flag] {
			continue
		}
		value, ok := lookupEnvVar(b.variable)
		if !ok || (value == "" && b.emptyIsUnset) {
			continue
		}
		if err := f.Set(b.flag, value); err != nil {
			fmt.Fprintf(f.Output(), "%s: %s is %q: %s\n", f.name, b.variable, value, b.want)
			return errUsage
		}
	}
	return nil
}

// printUsage prints the subcommand's help page (help.go).
func (f *flagSet) printUsage() {
	writeHelp(f.Output(), f.name, f.pflags().FlagUsages())
}

// PrintDefaults prints the flags as pflag does (-f, --filename FILE …).
func (f *flagSet) PrintDefaults() {
	_, _ = io.WriteString(f.Output(), f.pflags().FlagUsages())
}

// isSet reports whether the flag was given or came from its variable.
func (f *flagSet) isSet(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// globalFlags are --log-level and --log-format (every subcommand).
type globalFlags struct {
	logLevel, logFormat string
}

// register adds the global flags; defaultFormat is json for decider and
// frontdoor, text otherwise.
func (g *globalFlags) register(f *flagSet, defaultFormat string) {
	f.stringVar(&g.logLevel, "log-level", "DYNAMIC_CONFIG_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	f.stringVar(&g.logFormat, "log-format", "DYNAMIC_CONFIG_LOG_FORMAT", defaultFormat, "log format: json or text")
	f.completeValues("log-level", "debug", "info", "warn", "error")
	f.completeValues("log-format", "json", "text")
}

// parseArgs parses a subcommand's flags and builds its logger. It returns
// done=true with the exit code when the command must stop (help, usage).
func parseArgs(f *flagSet, g *globalFlags, args []string, stderr io.Writer) (logger *slogLogger, code int, done bool) {
	if err := f.parse(args); err != nil {
		if errors.Is(err, errHelp) {
			return nil, exitOK, true
		}
		return nil, exitUsage, true
	}
	l, err := newLogger(stderr, g.logLevel, g.logFormat)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", f.name, err)
		return nil, exitUsage, true
	}
	kubeclient.QuietKlog(l) // client-go's klog lines only with --log-level debug
	return l, exitOK, false
}

// positiveFlag is a numeric flag that must be above zero.
type positiveFlag struct {
	name, value string
	positive    bool
}

func durationFlag(name string, d time.Duration) positiveFlag {
	return positiveFlag{name, d.String(), d > 0}
}

// allPositive prints "<cmd>: --<flag> is <value>: it must be positive" for
// the first flag that is not and reports whether all are.
func allPositive(stderr io.Writer, cmd string, flags ...positiveFlag) bool {
	for _, f := range flags {
		if !f.positive {
			fmt.Fprintf(stderr, "%s: --%s is %s: it must be positive\n", cmd, f.name, f.value)
			return false
		}
	}
	return true
}

// errPprofWithoutMetrics refuses --pprof without a metrics listener: the
// profiles are served there and nowhere else.
func errPprofWithoutMetrics(cmd string) error {
	return fmt.Errorf("%s: --pprof serves on the metrics listener; set --metrics-addr too", cmd)
}

// commaList splits a comma-separated flag value (hosts, names) and drops
// the blanks: nil for "", and empty (not nil) for a list of blanks only.
func commaList(list string) []string {
	if list == "" {
		return nil
	}
	items := []string{}
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
