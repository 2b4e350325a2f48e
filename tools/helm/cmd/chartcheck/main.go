// Command chartcheck reads rendered Kubernetes manifests (helm template, kustomize build) for
// the chart checks of `make chart-test`:
//
//	chartcheck installation -f FILE -doc OUT -env OUT
//	    writes the installation document the decider would read (ConfigMap
//	    <name>-installation, key installation.yaml) and the decider container's installation
//	    variables (NAME=value lines, the document locator left out), and fails when the front
//	    door carries an installation variable (it would refuse to start, spec 07 §1.2).
//	chartcheck kustomize-base -f FILE
//	    prints the objects of a default chart render as the kustomize base holds them: no TLS
//	    Secrets (kustomize cannot issue a CA), no Helm hooks, no caBundle, no Helm-only labels.
//	chartcheck tls -f FILE
//	    checks the self-signed TLS material of a render: one CA, every pair verifies.
//	chartcheck same -a FILE -b FILE [-ignore-kind K,K]
//	    fails unless both files hold the same objects (order and formatting ignored).
//	chartcheck rules -f FILE -o RULES -unit RULES -tests TESTS
//	    writes the PrometheusRule's groups as Prometheus rule files and fails unless the
//	    promtool fixtures give every alert a firing and a quiet case (rules.go).
//	chartcheck dashboard-rules -f DASHBOARD.json -o RULES
//	    writes every dashboard query as a recording rule, for `promtool check rules`.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

type object = map[string]any

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: chartcheck installation|kustomize-base|tls|same|rules|dashboard-rules [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "installation":
		err = runInstallation(os.Args[2:])
	case "kustomize-base":
		err = runKustomizeBase(os.Args[2:], os.Stdout)
	case "same":
		err = runSame(os.Args[2:])
	case "tls":
		err = runTLS(os.Args[2:])
	case "rules":
		err = runRules(os.Args[2:])
	case "dashboard-rules":
		err = runDashboardRules(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartcheck: "+err.Error())
		os.Exit(1)
	}
}

// readObjects splits a multi-document YAML file into objects, skipping empty documents.
func readObjects(path string) ([]object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []object
	for i, doc := range splitDocuments(data) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i+1, err)
		}
		if len(o) > 0 {
			out = append(out, o)
		}
	}
	return out, nil
}

func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, " \t\r\n") == "---" {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.Bytes())
}

func str(o object, path ...string) string {
	v, _ := get(o, path...).(string)
	return v
}

func get(o any, path ...string) any {
	for _, k := range path {
		m, ok := o.(object)
		if !ok {
			return nil
		}
		o = m[k]
	}
	return o
}

// isHook reports whether o is a Helm hook or exists only for one: the
// install proof's ServiceAccount, Role and RoleBinding (component
// install-proof) are ordinary release objects that kustomize, having no
// hooks, has no use for.
func isHook(o object) bool {
	_, ok := get(o, "metadata", "annotations", "helm.sh/hook").(string)
	return ok || str(o, "metadata", "labels", "app.kubernetes.io/component") == "install-proof"
}

// installationVariables are the names the front door refuses (spec 02 §2 #1–#27 and the
// document locator).
var installationVariables = map[string]bool{
	"DYNAMIC_CONFIG_AGENT_CPU_REQUEST": true, "DYNAMIC_CONFIG_AGENT_MEMORY_REQUEST": true,
	"DYNAMIC_CONFIG_AGENT_CPU_LIMIT": true, "DYNAMIC_CONFIG_AGENT_MEMORY_LIMIT": true,
	"DYNAMIC_CONFIG_AGENT_FILE_MODE": true, "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS": true,
	"DYNAMIC_CONFIG_AGENT_MODE": true, "DYNAMIC_CONFIG_AGENT_NATIVE_SIDECAR": true,
	"DYNAMIC_CONFIG_AGENT_VOLUME_MEDIUM": true, "DYNAMIC_CONFIG_AGENT_RUN_AS_USER": true,
	"DYNAMIC_CONFIG_AGENT_RUN_AS_GROUP": true, "DYNAMIC_CONFIG_AGENT_METRICS_PORT": true,
	"DYNAMIC_CONFIG_AGENT_SOURCE": true, "DYNAMIC_CONFIG_AGENT_PATH": true,
	"DYNAMIC_CONFIG_AGENT_ENV": true, "DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE": true,
	"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS": true, "DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW": true,
	"DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW": true, "DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY": true,
	"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW": true, "DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS": true,
	"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY": true, "DYNAMIC_CONFIG_WEBHOOK_CLASSES": true,
	"DYNAMIC_CONFIG_AGENT_IMAGE": true, "DYNAMIC_CONFIG_AGENT_PULL_SECRET": true,
	"DYNAMIC_CONFIG_ENV_POLICY": true, "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE": true,
}

func find(objs []object, kind, nameSuffix string) (object, error) {
	var found []object
	for _, o := range objs {
		if str(o, "kind") == kind && strings.HasSuffix(str(o, "metadata", "name"), nameSuffix) && !isHook(o) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("want one %s named *%s, found %d", kind, nameSuffix, len(found))
	}
	return found[0], nil
}

// containerEnv returns the env list of the container named name in a Deployment.
func containerEnv(d object, name string) ([]object, error) {
	containers, _ := get(d, "spec", "template", "spec", "containers").([]any)
	for _, c := range containers {
		co, _ := c.(object)
		if str(co, "name") != name {
			continue
		}
		var env []object
		list, _ := co["env"].([]any)
		for _, e := range list {
			eo, _ := e.(object)
			env = append(env, eo)
		}
		return env, nil
	}
	return nil, fmt.Errorf("deployment %s has no container %q", str(d, "metadata", "name"), name)
}

func runInstallation(args []string) error {
	fs := flag.NewFlagSet("installation", flag.ContinueOnError)
	file := fs.String("f", "", "rendered manifests")
	docOut := fs.String("doc", "", "where to write the installation document")
	envOut := fs.String("env", "", "where to write the decider's installation variables")
	rolloutOut := fs.String("rollout", "", "where to write the ConfigMap's rollout.yaml (the rollout document; required to exist when set)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := readObjects(*file)
	if err != nil {
		return err
	}
	cm, err := find(objs, "ConfigMap", "-installation")
	if err != nil {
		return err
	}
	doc, ok := get(cm, "data", "installation.yaml").(string)
	if !ok {
		return errors.New("the installation ConfigMap has no installation.yaml")
	}
	if *rolloutOut != "" {
		r, ok := get(cm, "data", "rollout.yaml").(string)
		if !ok {
			return errors.New("the installation ConfigMap has no rollout.yaml")
		}
		if err := os.WriteFile(*rolloutOut, []byte(r), 0o644); err != nil {
			return err
		}
	}
	decider, err := find(objs, "Deployment", "-decider")
	if err != nil {
		return err
	}
	env, err := containerEnv(decider, "decider")
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range env {
		name := str(e, "name")
		if !strings.HasPrefix(name, "DYNAMIC_CONFIG_") || !installationVariables[name] || name == "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE" {
			continue
		}
		if _, ok := e["valueFrom"]; ok {
			return fmt.Errorf("decider variable %s comes from valueFrom; the check needs a literal value", name)
		}
		lines = append(lines, name+"="+str(e, "value"))
	}
	frontdoor, err := find(objs, "Deployment", "-frontdoor")
	if err != nil {
		return err
	}
	fenv, err := containerEnv(frontdoor, "frontdoor")
	if err != nil {
		return err
	}
	for _, e := range fenv {
		if installationVariables[str(e, "name")] {
			return fmt.Errorf("the front door carries the installation variable %s; it would refuse to start", str(e, "name"))
		}
	}
	if err := os.WriteFile(*docOut, []byte(doc), 0o644); err != nil {
		return err
	}
	body := strings.Join(lines, "\n")
	if body != "" {
		body += "\n"
	}
	return os.WriteFile(*envOut, []byte(body), 0o644)
}

// helmOnlyLabels are the labels a Helm release adds that a kustomize base cannot know.
var helmOnlyLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}

func normaliseForBase(objs []object) []object {
	var out []object
	for _, o := range objs {
		if isHook(o) || str(o, "kind") == "Secret" {
			continue
		}
		stripLabels(o)
		if hooks, ok := o["webhooks"].([]any); ok {
			for _, w := range hooks {
				if cc, ok := get(w, "clientConfig").(object); ok {
					delete(cc, "caBundle")
				}
			}
		}
		out = append(out, o)
	}
	sortObjects(out)
	return out
}

func stripLabels(o object) {
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		if labels, ok := get(o, path...).(object); ok {
			for _, l := range helmOnlyLabels {
				delete(labels, l)
			}
		}
	}
}

func sortObjects(objs []object) {
	key := func(o object) string {
		return str(o, "kind") + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
	}
	sort.SliceStable(objs, func(i, j int) bool { return key(objs[i]) < key(objs[j]) })
}

func runKustomizeBase(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("kustomize-base", flag.ContinueOnError)
	file := fs.String("f", "", "a default chart render")
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := readObjects(*file)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "# Generated from the chart's default render by `make chart-kustomize-base`; do not edit.")
	fmt.Fprintln(w, "# The chart (charts/dynamic-config) with default values, release \"dynamic-config\" in namespace")
	fmt.Fprintln(w, "# \"dynamic-config\", without the TLS Secrets, the Helm hooks, the webhook caBundle and the")
	fmt.Fprintln(w, "# Helm-only labels (spec 07 §6.7).")
	for i, o := range normaliseForBase(objs) {
		out, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

func runSame(args []string) error {
	fs := flag.NewFlagSet("same", flag.ContinueOnError)
	a := fs.String("a", "", "first file")
	b := fs.String("b", "", "second file")
	ignore := fs.String("ignore-kind", "", "comma-separated kinds to leave out of both files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, k := range strings.Split(*ignore, ",") {
		drop[strings.TrimSpace(k)] = k != ""
	}
	keep := func(objs []object) []object {
		var out []object
		for _, o := range objs {
			if !drop[str(o, "kind")] {
				out = append(out, o)
			}
		}
		return out
	}
	objsA, err := readObjects(*a)
	if err != nil {
		return err
	}
	objsB, err := readObjects(*b)
	if err != nil {
		return err
	}
	objsA, objsB = keep(objsA), keep(objsB)
	sortObjects(objsA)
	sortObjects(objsB)
	if reflect.DeepEqual(objsA, objsB) {
		return nil
	}
	ja, _ := json.MarshalIndent(objsA, "", "  ")
	jb, _ := json.MarshalIndent(objsB, "", "  ")
	la, lb := strings.Split(string(ja), "\n"), strings.Split(string(jb), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Errorf("%s and %s differ at line %d of their JSON form:\n  %s\n  %s", *a, *b, i+1, la[i], lb[i])
		}
	}
	return fmt.Errorf("%s and %s differ in length (%d and %d JSON lines)", *a, *b, len(la), len(lb))
}
