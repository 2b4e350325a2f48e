package installation

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
)

// BlankDocumentProblem is the one problem of a reload refused because the
// document became blank (GetInstallation.last_reload.problems).
const BlankDocumentProblem = "the document became empty; write {} to mean the empty installation"

// now is the clock used for LoadedAt (tests replace it).
var now = time.Now

// Document is the installation document as read (spec 02 §1): its path, whether
// it exists, its top-level map (nil for the empty document) and the problems
// met reading it (a missing or unreadable file, text that does not parse) —
// the loader (decider/installationloader) reads it, the model never does.
type Document struct {
	Path    string
	Present bool
	// Blank: present, and empty, whitespace or comments only (the empty document).
	Blank bool
	// Unread: the document could not be read or parsed, or was refused as
	// blank; its revision was then not attempted.
	Unread   bool
	Root     *doctree.Node
	Problems []string
}

// Build validates the whole installation — the environment (KEY=value; nil
// = none) over the document — and returns it, or a *Problems naming every
// problem in the order of spec 02 §7.3. decode (not nil) decodes the text of
// DYNAMIC_CONFIG_ENV_POLICY into a tree: the model never parses text, its
// callers hand it decider/docparse.Text.
func Build(doc Document, environ []string, decode envpolicy.DecodeText) (*Installation, error) {
	rep := newReport()
	for _, p := range doc.Problems {
		rep.shape = append(rep.shape, Problem{Text: p})
	}
	return build(doc, newEnvironment(environ, decode), rep)
}

// build merges the environment over the document, validates and assembles
// the snapshot.
func build(doc Document, env environment, rep *report) (*Installation, error) {
	docKeys := documentSettings(doc, rep)
	inst := Empty()
	inst.DocumentPath = doc.Path
	inst.DocumentPresent = doc.Present
	inst.DocumentBlank = doc.Blank
	readings, inputs, failed := readSettings(doc, docKeys, env, rep)

	canon := map[string]any{}
	for i, s := range settings {
		r := readings[i]
		if failed[i] {
			// The attempted revision (Problems.AttemptedRevision) records
			// what was written for a setting that failed.
			// A failed envPolicy enters only as a mark: its listed values
			// never enter a revision (spec 02 §10).
			if s.Kind == kindEnvPolicy {
				canon[s.Variable] = "<invalid>"
			} else if raw := rawValue(inputs[i]); raw != nil {
				canon[s.Variable] = raw
			}
		} else if r.set {
			canon[s.Variable] = r.canon
		}
		if r.set {
			apply(inst, s, r, inputs[i])
		}
	}
	resolvePins(inst)
	rep.cross = textProblems(crossChecks(inst))
	rep.scan = textProblems(scanEnvironment(env))

	canonical := encodeCanonical(canon)
	revision := Revision(canonical)
	if items := rep.problems(); len(items) > 0 {
		attempted := revision
		if doc.Unread {
			// Nothing of the document was read: the settings that "did
			// parse" would name the empty document, which was not attempted.
			attempted = ""
		}
		return nil, newProblems(doc.Path, items, attempted)
	}
	inst.Canonical = canonical
	inst.Revision = revision
	inst.LoadedAt = now()
	inst.Settings = displaySettings(inst, readings, inputs)
	inst.Warnings = advisoryWarnings(inst)
	return inst, nil
}

// documentSettings are the document's settings by key; an unknown key and a
// key written twice are shape problems.
func documentSettings(doc Document, rep *report) map[string]*doctree.Node {
	docKeys := map[string]*doctree.Node{}
	for _, p := range doctree.Pairs(doc.Root) {
		if !slices.Contains(documentKeys, p.Key) {
			rep.shape = append(rep.shape, Problem{Path: p.Key, Value: p.Key, Expected: "an installation setting", Text: unknownKeyProblem(p.Key)})
			continue
		}
		if _, dup := docKeys[p.Key]; dup {
			// decision: YAML keeps the last of two equal keys; a setting
			// written twice is reported, never silently decided.
			rep.shape = append(rep.shape, Problem{Path: p.Key, Text: p.Key + ": " + strconv.Quote(p.Key) + " appears twice"})
			continue
		}
		docKeys[p.Key] = p.Value
	}
	return docKeys
}

// readSettings reads every setting, the environment over the document (a
// document value the environment hides is still checked, and reported as
// hidden); failed marks the settings whose effective input had problems.
func readSettings(doc Document, docKeys map[string]*doctree.Node, env environment, rep *report) (readings []reading, inputs []input, failed []bool) {
	readings = make([]reading, len(settings))
	inputs = make([]input, len(settings))
	failed = make([]bool, len(settings))
	for i, s := range settings {
		envText, envSet := env.lookup(s.Variable)
		var docNode *doctree.Node
		if s.Key != "" {
			docNode = docKeys[s.Key]
		}
		var docIn input
		if docNode != nil {
			docIn = input{node: docNode, ctx: docCtx(s.Key, s.Variable), source: SourceDocument, origin: documentOrigin(doc.Path, s.Key)}
		}
		report := rep.forSetting(i, "", "")
		counted := sink(func(p Problem) { failed[i] = true; report(p) })
		if envSet {
			in := input{text: envText, decode: env.decode, ctx: envCtx(s.Variable), source: SourceEnvironment, origin: s.Variable}
			readings[i], inputs[i] = read(s, in, counted), in
			if docNode != nil {
				read(s, docIn, rep.forSetting(i, s.Variable, s.Key))
			}
			continue
		}
		if docNode != nil {
			docReport := rep.forSetting(i, "", s.Key)
			readings[i], inputs[i] = read(s, docIn, sink(func(p Problem) { failed[i] = true; docReport(p) })), docIn
		}
	}
	return readings, inputs, failed
}

// Revision is "sha256:<hex>" of a canonical form.
func Revision(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func documentOrigin(path, key string) string {
	if path == "" {
		return key
	}
	return path + ": " + key
}

// unknownKeyProblem is the unknown top-level key message of spec 02 §5.3,
// with the per-store hint for a store-shaped knob (any spelling).
func unknownKeyProblem(key string) string {
	msg := key + ": " + strconv.Quote(key) + " is not an installation setting; "
	if k := storeShapedKey(key); k != "" {
		msg += k + " is a per-store knob — set it under storeDefaults.<store>; "
	}
	return msg + "the ones there are: " + strings.Join(documentKeys, ", ")
}

// storeShapedKey returns the store-shaped knob a document key spells
// (endpoint, endpoint-secret, endpointSecret, endpoint_secret, …), or "".
func storeShapedKey(key string) string {
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s))
	}
	f := fold(key)
	for _, k := range StoreShapedKnobs {
		if fold(k) == f {
			return k
		}
	}
	return ""
}

// apply puts one effective reading into the snapshot.
func apply(inst *Installation, s setting, r reading, in input) {
	switch s.Kind {
	case kindKnob:
		inst.Fleet[s.Knob] = r.value
	case kindAgentEnv:
		inst.AgentEnv = r.entries
	case kindOverridable:
		inst.FleetOverridable = r.flag
	case kindStoreDefaults:
		inst.Stores = r.groups
	case kindGate:
		g := Gate{Name: s.Key, Variable: s.Variable, Groups: r.gate, Source: in.source, Origin: in.origin}
		switch s.Key {
		case "agentEnvAllow":
			inst.AgentEnvAllow = g
		case "sourceAllow":
			inst.SourceAllow = g
		case "sourceDeny":
			inst.SourceDeny = g
		}
	case kindImageAllow:
		inst.AgentImageAllow = r.prefixes
	case kindSwitch:
		switch s.Variable {
		case VarAllowEvents:
			inst.AllowEvents = r.flag
		case VarMatchGuaranteed:
			inst.MatchGuaranteed = r.flag
		default:
			inst.AllowTLSSkipVerify = r.flag
		}
	case kindClasses:
		inst.ClassesEnabled = r.flag
	case kindImage:
		inst.AgentImage = r.display
	case kindPullSecret:
		inst.PullSecret = r.display
	case kindEnvPolicy:
		inst.EnvPolicy = r.policy
	}
}

// resolvePins fills Pinned and Rule on every value by the override rule of
// spec 02 §6: the value's marker, else its group's flag, else the fleet flag.
// The rule always comes from the tier that supplied the value.
func resolvePins(inst *Installation) {
	rule := func(v *Value, groupFlag *bool) {
		switch {
		case v.Marker != MarkerNone:
			v.Pinned, v.Rule = v.Marker == MarkerPinned, OverrideMarker
		case groupFlag != nil:
			v.Pinned, v.Rule = !*groupFlag, OverrideStoreFlag
		default:
			v.Pinned, v.Rule = !inst.FleetOverridable, OverrideFleetFlag
		}
	}
	for k, v := range inst.Fleet {
		rule(&v, nil)
		inst.Fleet[k] = v
	}
	for _, g := range inst.Stores {
		for k, v := range g.Knobs {
			rule(&v, g.Overridable)
			g.Knobs[k] = v
		}
	}
}

// rawValue is a failed setting's value as written, for the attempted
// revision: the trimmed variable text, or the document node as plain data.
func rawValue(in input) any {
	if in.node == nil {
		if t := trim(in.text); t != "" {
			return t
		}
		return nil
	}
	return nodeValue(in.node)
}

// nodeValue converts a document node into plain data (scalars as their text).
func nodeValue(n *doctree.Node) any {
	switch {
	case doctree.IsNull(n):
		return nil
	case n.Kind == doctree.Sequence:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = nodeValue(c)
		}
		return out
	case n.Kind == doctree.Mapping:
		out := map[string]any{}
		for _, p := range doctree.Pairs(n) {
			out[p.Key] = nodeValue(p.Value)
		}
		return out
	}
	return n.Value
}
