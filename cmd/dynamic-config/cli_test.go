package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliRun runs the whole command line as main does.
func cliRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const cliPod = `apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
    dynamic-config.rs/inject: "true"
    dynamic-config.rs/source: "consul"
    dynamic-config.rs/endpoint: "http://consul:8500"
    dynamic-config.rs/key: "myapp/config.json"
    dynamic-config.rs/path: "/config/rendered.toml"
spec:
  containers:
  - name: app
    image: registry.example/app:1
`

// The kubectl/helm/istioctl conventions (issue 15): every spelling of the
// offline doors' flags reaches the same command, the old spellings included.
func TestCommandLineConventions(t *testing.T) {
	withFoundationEnv(t, nil)
	dir := t.TempDir()
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	pod := explainWriteFile(t, manifests, "a-pod.yaml", cliPod)
	explainWriteFile(t, manifests, "b-pod.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"app","image":"x"}]}}`)
	explainWriteFile(t, manifests, "notes.txt", "not a manifest")

	cases := []struct {
		name  string
		stdin string
		args  []string
		// want is in stdout; wantErr in stderr; code is the exit code.
		want, wantErr string
		code          int
	}{
		{"-f and -o as shorthands", "", []string{"inject", "-f", pod, "--installation", empty, "--no-env", "-o", "patch"},
			`"op":"add"`, pod + ": injected", exitOK},
		{"--filename and --output as long flags", "", []string{"inject", "--filename", pod, "--installation", empty, "--no-env", "--output", "patch"},
			`"op":"add"`, pod + ": injected", exitOK},
		{"--output=json with an equals sign", "", []string{"inject", "--filename=" + pod, "--installation=" + empty, "--no-env", "--output=json"},
			`"kind": "Pod"`, "", exitOK},
		{"-ojson glued to its shorthand", "", []string{"inject", "-f", pod, "--installation", empty, "--no-env", "-ojson"},
			`"kind": "Pod"`, "", exitOK},
		{"the standard library's single-dash long flags keep working", "", []string{"inject", "-f", pod, "-installation", empty, "-no-env", "-o", "patch"},
			`"op":"add"`, "", exitOK},
		{"-f - reads stdin", cliPod, []string{"inject", "-f", "-", "--installation", empty, "--no-env", "-o", "patch"},
			`"op":"add"`, "-: injected", exitOK},
		{"-f DIR reads its .yaml, .yml and .json files in name order", "", []string{"inject", "-f", manifests, "--installation", empty, "--no-env", "-o", "patch"},
			`"op":"add"`, pod + ": injected (1 agent container(s))\n" + filepath.Join(manifests, "b-pod.json") + ": nothing to inject", exitOK},
		{"-n and --namespace name the namespace", "", []string{"explain", "-f", pod, "--installation", empty, "--no-env", "-n", "team-a"},
			"team-a", "", exitOK},
		{"--namespace as a long flag", "", []string{"explain", "-f", pod, "--installation", empty, "--no-env", "--namespace", "team-b"},
			"team-b", "", exitOK},
		{"a wrong flag is one short error and a pointer to --help", "", []string{"inject", "--bogus"},
			"", "inject: unknown flag: --bogus\nSee 'dynamic-config inject --help'.\n", exitUsage},
		{"a wrong shorthand is one short error too", "", []string{"explain", "-z"},
			"", "explain: unknown shorthand flag: 'z' in -z\nSee 'dynamic-config explain --help'.\n", exitUsage},
		{"a missing value names the flag", "", []string{"inject", "--filename"},
			"", "inject: flag needs an argument: --filename\nSee 'dynamic-config inject --help'.\n", exitUsage},
		{"an unknown subcommand is a short error", "", []string{"nosuch"},
			"", "dynamic-config: unknown command \"nosuch\"\nSee 'dynamic-config --help'.\n", exitUsage},
		{"a misspelt subcommand is answered with the one it may mean", "", []string{"injekt"},
			"", "dynamic-config: unknown command \"injekt\"; did you mean \"inject\"?\nSee 'dynamic-config --help'.\n", exitUsage},
		{"an unknown subcommand with --help is still an unknown subcommand", "", []string{"nosuch", "--help"},
			"", "unknown command \"nosuch\"", exitUsage},
		{"completion offers only the shells the usage names", "", []string{"__complete", "completion", ""},
			"bash\nzsh\nfish\n:4\n", "", exitOK},
		{"completion completes -o to the command's outputs", "", []string{"__complete", "inject", "-o", ""},
			"yaml\njson\npatch\nreview\n:4\n", "", exitOK},
		{"completion completes the log level", "", []string{"__complete", "decider", "--log-level", ""},
			"debug\ninfo\nwarn\nerror\n:4\n", "", exitOK},
		{"completion offers installation documents for --installation", "", []string{"__complete", "check-installation", "--installation", ""},
			"yaml\nyml\njson\ntoml\n:8\n", "", exitOK},
		{"completion of a shell it has no script for is refused", "", []string{"completion", "powershell"},
			"", "completion: \"powershell\" is not a shell this writes a script for: bash, zsh or fish\n", exitUsage},
		{"completion without a shell is refused", "", []string{"completion"},
			"", "completion: name the shell: bash, zsh or fish\n", exitUsage},
		{"completion's --help is a help page like the others", "", []string{"completion", "--help"},
			"", "usage: dynamic-config completion bash|zsh|fish\n", exitOK},
		{"--version prints the version", "", []string{"--version"},
			"dynamic-config " + binaryVersion() + "\n", "", exitOK},
		{"--help lists the subcommands on stdout", "", []string{"--help"},
			"completion", "", exitOK},
		{"a subcommand's --help shows the shorthands next to the long flags", "", []string{"inject", "--help"},
			"", "-f, --filename FILE", exitOK},
		{"help inject is inject's --help", "", []string{"help", "inject"},
			"", "-o, --output string", exitOK},
		{"no subcommand prints the usage and exits 2", "", nil,
			"", "usage: dynamic-config <subcommand>", exitUsage},
		{"completion bash prints a bash script", "", []string{"completion", "bash"},
			"complete -o default -F __start_dynamic-config dynamic-config", "", exitOK},
		{"completion zsh prints a zsh script", "", []string{"completion", "zsh"},
			"#compdef dynamic-config", "", exitOK},
		{"completion fish prints a fish script", "", []string{"completion", "fish"},
			"complete -c dynamic-config", "", exitOK},
		{"completion completes a subcommand's long flags", "", []string{"__complete", "inject", "--file"},
			"--filename", "", exitOK},
		{"completion completes the subcommands", "", []string{"__complete", "exp"},
			"explain", "", exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, c.stdin, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stdout, c.want) {
				t.Errorf("stdout:\n%s\nwant it to contain %q", stdout, c.want)
			}
			if !strings.Contains(stderr, c.wantErr) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", stderr, c.wantErr)
			}
		})
	}
}

// Every long flag and environment variable of the long-running subcommands
// keeps working through pflag: the flag tables (flags_test.go) list them; here
// each one is set by flag and by variable through the adapter.
func TestEveryDeclaredFlagParsesThroughPflag(t *testing.T) {
	for _, name := range subcommandNames() {
		sc := subcommands[name]
		pfs := describeFlags(name, sc)
		if pfs == nil {
			t.Errorf("%s declares no flags (it must at least have --log-level)", name)
			continue
		}
		if pfs.Lookup("log-level") == nil {
			t.Errorf("%s has no --log-level", name)
		}
	}
	fs := newFlagSet("decider", &bytes.Buffer{})
	var f deciderFlags
	f.register(fs)
	withFoundationEnv(t, map[string]string{"DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL": "3s"})
	if err := fs.parse([]string{"--addr", "127.0.0.1:7", "-plaintext", "--reflection=false", "--max-recv-bytes=10"}); err != nil {
		t.Fatal(err)
	}
	if f.cfg.Addr != "127.0.0.1:7" || !f.plaintext || f.cfg.Reflection || f.maxRecvBytes != 10 || f.cfg.Installation.ReloadInterval.String() != "3s" {
		t.Errorf("parsed %+v", f)
	}
	if !fs.isSet("addr") || !fs.isSet("plaintext") || !fs.isSet("reload-interval") || fs.isSet("tls-cert") {
		t.Error("isSet does not see what pflag set and what the environment set")
	}
}

// Every subcommand's --help is one page in one style: the usage line, what
// it does, at least one example naming the subcommand, then pflag's flags.
func TestEverySubcommandHasOneHelpStyleWithExamples(t *testing.T) {
	withFoundationEnv(t, nil)
	for _, name := range subcommandNames() {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, "", append(strings.Fields(name), "--help")...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			page := stderr
			for _, want := range []string{
				"usage: dynamic-config " + name,
				"\nExamples:\n  # ",
				"\n  dynamic-config " + name,
				"\nFlags:\n",
				"      --log-level string",
			} {
				if !strings.Contains(page, want) {
					t.Errorf("help page lacks %q:\n%s", want, page)
				}
			}
			if strings.Contains(page, "Usage of ") || strings.Contains(page, "\n  -log-level") {
				t.Errorf("help page is in the standard library's style:\n%s", page)
			}
		})
	}
}

// A refusal of an offline door with no installation document loaded says
// so; with an installation it does not.
func TestARefusalWithoutAnInstallationHintsAtIt(t *testing.T) {
	withFoundationEnv(t, nil)
	dir := t.TempDir()
	pod := explainWriteFile(t, dir, "pod.yaml", strings.Replace(cliPod, "    dynamic-config.rs/endpoint: \"http://consul:8500\"\n", "", 1))
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	const hint = "hint: no installation document was loaded"
	cases := []struct {
		name     string
		args     []string
		wantHint bool
	}{
		{"inject without an installation", []string{"inject", "-f", pod, "--no-env", "--installation", ""}, true},
		{"explain without an installation", []string{"explain", "-f", pod, "--no-env"}, true},
		{"inject with an installation document", []string{"inject", "-f", pod, "--no-env", "--installation", empty}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, "", c.args...)
			if code != exitRefused {
				t.Fatalf("exit %d, want %d (refused)\nstdout:\n%s\nstderr:\n%s", code, exitRefused, stdout, stderr)
			}
			if got := strings.Contains(stderr, hint); got != c.wantHint {
				t.Errorf("hint shown: %v, want %v\nstderr:\n%s", got, c.wantHint, stderr)
			}
		})
	}
}

// A subcommand named "<group> <verb>" is a verb of its group: run, helped
// and completed as `dynamic-config <group> <verb>`; the group alone lists
// its verbs and is a usage error, as the root alone is.
func TestAGroupsVerbsRunUnderTheGroup(t *testing.T) {
	withFoundationEnv(t, nil)
	const group = "rollout"
	var ran []string
	subcommands[group+" probe"] = subcommand{
		run: func(args []string, _ io.Reader, stdout, _ io.Writer) int {
			ran = args
			fmt.Fprintln(stdout, "probed")
			return exitRefused
		},
		summary: "a verb of the test's", synopsis: "usage: dynamic-config rollout probe", examples: []example{{"probe", "dynamic-config rollout probe"}},
	}
	t.Cleanup(func() { delete(subcommands, group+" probe") })

	cases := []struct {
		name               string
		args               []string
		code               int
		wantOut, wantErr   string
		notOut, notErrText string
	}{
		{"the verb runs with its own arguments", []string{"rollout", "probe", "-o", "json"}, exitRefused, "probed", "", "", ""},
		{"the group alone lists its verbs and is a usage error", []string{"rollout"}, exitUsage, "", "  probe                a verb of the test's", "probed", ""},
		{"the group's help lists its verbs", []string{"rollout", "--help"}, exitOK, "usage: dynamic-config rollout <verb> [flags]", "", "probed", ""},
		{"an unknown verb is a usage error", []string{"rollout", "prob"}, exitUsage, "", `unknown command "prob"`, "probed", `for "dynamic-config`},
		{"the root lists the verb under its full name", []string{"--help"}, exitOK, "  rollout probe        a verb of the test's", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, "", c.args...)
			if code != c.code || !strings.Contains(stdout, c.wantOut) || !strings.Contains(stderr, c.wantErr) ||
				(c.notOut != "" && strings.Contains(stdout, c.notOut)) || (c.notErrText != "" && strings.Contains(stderr, c.notErrText)) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
		})
	}
	if strings.Join(ran, " ") != "-o json" {
		t.Errorf("the verb ran with %q, want its own arguments", ran)
	}
}
