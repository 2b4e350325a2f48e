package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/internal/pflagview"
	"github.com/dynamic-config-admission/dynamic-config/internal/prose"
)

// offlineCommand is what sets one offline door (inject, explain) apart on
// the command line; everything else about their flags is shared.
type offlineCommand struct {
	name     string // inject, explain
	synopsis string // the usage line of spec 07 §1.4/§1.5
	fileHelp string // what -f takes
	// outputs are the -o values, in the order the messages name them.
	outputs []string
	// outputDefault is -o's default, accepted too ("" = the input's format).
	outputDefault string
	// outputNote follows the -o values in the flag's help ("" = none).
	outputNote string
	// admit is the command's kind rule, applied to each document as it is
	// read (nil: every document is read; the command checks kinds itself).
	admit func(*manifest.Document) error
	// flags adds the command's own flags (nil: none).
	flags         func(*flagSet, *offlineFlags)
	filesOptional bool // diff: --from-cluster instead of -f
}

// offlineFlags are the flags the offline doors share (spec 07 §1.4–1.5):
// the global flags, the repeatable -f, --namespace (-n), -o and the
// installation flags.
type offlineFlags struct {
	global    globalFlags
	files     pflagview.Repeated
	namespace string
	output    string
	cluster   string
	// explain's own (explainCommand.flags)
	all              bool
	releaseNamespace string
	inst             installationFlags
	// classesFile is --classes-file (spec 08 §2): the offline doors read
	// classes only from a file.
	classesFile string
	// verbose (-v) adds the notes about documents passed through.
	verbose   bool
	recursive bool // -R: directories with their subdirectories
}

// parseOfflineFlags parses cmd's command line and checks that -f is given
// and -o is one of cmd's outputs. It returns done=true with the exit code
// when the command must stop (help, usage; the problem is printed).
func parseOfflineFlags(cmd offlineCommand, args []string, stderr io.Writer) (f *offlineFlags, code int, done bool) {
	fs := newFlagSet(cmd.name, stderr)
	f = &offlineFlags{}
	f.global.register(fs, "text")
	f.files.TypeName = "FILE"
	fs.Var(&f.files, "f", cmd.fileHelp)
	fs.StringVar(&f.namespace, "namespace", "", "namespace (default: the document's metadata.namespace, else default)")
	fs.StringVar(&f.namespace, "n", "", "alias of --namespace")
	fs.StringVar(&f.output, "o", cmd.outputDefault, "output: "+prose.Join(cmd.outputs, "or")+cmd.outputNote)
	fs.StringVar(&f.cluster, "cluster-name", "", "the cluster the documents are admitted in, as a front door's --cluster-name sends it (default: the decider's own)")
	f.inst.register(fs.FlagSet)
	fs.StringVar(&f.classesFile, "classes-file", "", classesFileHelp)
	fs.BoolVar(&f.verbose, "v", false, "also say which documents were passed through, and why")
	fs.BoolVar(&f.recursive, "R", false, "-f DIR reads its subdirectories too, as kubectl -R does")
	if cmd.flags != nil {
		cmd.flags(fs, f)
	}
	fs.completeValues("o", cmd.outputs...)
	if _, code, done := parseArgs(fs, &f.global, args, stderr); done {
		return nil, code, true
	}
	switch {
	case callers.CheckClusterName(f.cluster) != "":
		fmt.Fprintf(stderr, "%s: --cluster-name is %s\n", cmd.name, callers.CheckClusterName(f.cluster))
		return nil, exitUsage, true
	case len(f.files.Values) == 0 && !cmd.filesOptional:
		fmt.Fprintf(stderr, "%s: -f FILE is required\n%s\n", cmd.name, cmd.synopsis)
		return nil, exitUsage, true
	case f.output != cmd.outputDefault && !slices.Contains(cmd.outputs, f.output):
		fmt.Fprintf(stderr, "%s: -o is %q: %s\n", cmd.name, f.output, prose.Join(cmd.outputs, "or"))
		return nil, exitUsage, true
	}
	return f, exitOK, false
}

// offlineInput is what an offline door works on.
type offlineInput struct {
	*offlineFlags
	installation *installation.Installation
	classes      *classes.Set // nil: classes off
	docs         []*manifest.Document
	// noDocument: no installation document was found (the empty one is in
	// force); a refusal then says so (installationsource.NoDocumentHint).
	noDocument bool
}

// readOfflineInput parses cmd's command line, loads the installation the
// flags name and reads the -f documents, in that order. It returns
// done=true with the exit code when the command must stop; the problem (a
// usage error, every problem of the installation, an unreadable or refused
// document) is printed.
func readOfflineInput(cmd offlineCommand, args []string, stdin io.Reader, stderr io.Writer) (in *offlineInput, code int, done bool) {
	flags, code, done := parseOfflineFlags(cmd, args, stderr)
	if done {
		return nil, code, true
	}
	inst, err := flags.inst.source().Load()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, exitUsage, true
	}
	set, err := deciderd.ReadClassesFile(flags.classesFile)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, exitUsage, true
	}
	if set == nil && inst.ClassesEnabled {
		fmt.Fprintf(stderr, "%s: DYNAMIC_CONFIG_WEBHOOK_CLASSES is true, and the offline doors do not watch the API server: give the classes with --classes-file FILE\n", cmd.name)
		return nil, exitUsage, true
	}
	docs, err := manifest.Read(cmd.name, flags.files.Values, flags.recursive, stdin, cmd.admit)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, exitUsage, true
	}
	return &offlineInput{offlineFlags: flags, installation: inst, classes: set, docs: docs,
		noDocument: flags.inst.source().NoDocument(inst)}, exitOK, false
}
