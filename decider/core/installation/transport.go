package installation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
)

// Transport is the form in which a leader hands its installation to a
// follower (spec 09 §2): the canonical JSON and its revision. Canonical is
// the installation's canonical JSON (02 §10) byte for byte, except that the
// listed values of envPolicy rules, which the revision hashes, are in clear
// (envpolicy.Transport): a follower must enforce them (issue 24, decision).
// Without listed values sha256(Canonical) is Revision.
type Transport struct {
	Revision  string
	Canonical []byte
}

// TransportDocumentPath is the DocumentPath of an installation rebuilt from
// a transport form: the settings' origins name the leader's canonical form.
const TransportDocumentPath = "<leader>"

// Transport returns the transport form of inst.
func (inst *Installation) Transport() Transport {
	t := Transport{Revision: inst.Revision, Canonical: inst.Canonical}
	if !envpolicy.HasListedValues(inst.EnvPolicy) {
		return t
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(inst.Canonical, &members); err != nil {
		// Canonical is this package's own encoding of a map: it decodes.
		panic("installation: transport form: " + err.Error())
	}
	canon := make(map[string]any, len(members))
	for k, v := range members {
		canon[k] = v
	}
	canon[varEnvPolicy] = json.RawMessage(envpolicy.Transport(inst.EnvPolicy))
	t.Canonical = encodeCanonical(canon)
	return t
}

// ErrRevisionMismatch is wrapped by FromTransport's error when the canonical
// form is a valid installation of another revision than the one announced.
var ErrRevisionMismatch = errors.New("revision mismatch")

// FromTransport rebuilds the installation a leader sent (spec 09 §2): the
// canonical form is read as a document (the env-only settings as their
// variables), validated by the same code as a leader's installation (an
// invalid one is a *Problems), and its revision must be t.Revision (else an
// error wrapping ErrRevisionMismatch). It does no I/O.
func FromTransport(t Transport) (*Installation, error) {
	members, err := decodeMembers(t.Canonical)
	if err != nil {
		return nil, &Problems{DocumentPath: TransportDocumentPath, Lines: []string{"the canonical form is not a JSON object of settings: " + err.Error()}}
	}
	root := &doctree.Node{Kind: doctree.Mapping}
	var environ, problems []string
	for _, m := range members {
		s, ok := settingByVariable(m.key)
		if !ok {
			problems = append(problems, strconv.Quote(m.key)+" is not an installation variable")
			continue
		}
		if s.Key == "" {
			// An env-only setting: its canonical value is its variable's text.
			if m.value.Kind != doctree.Scalar || m.value.Tag != "!!str" {
				problems = append(problems, m.key+": the canonical form holds a "+doctree.KindWord(m.value)+"; a string is required")
				continue
			}
			environ = append(environ, m.key+"="+m.value.Value)
			continue
		}
		v := m.value
		if s.Kind == kindGate {
			v, err = gateNode(v)
			if err != nil {
				problems = append(problems, m.key+": "+err.Error())
				continue
			}
		}
		root.Content = append(root.Content, &doctree.Node{Kind: doctree.Scalar, Tag: "!!str", Value: s.Key}, v)
	}
	if len(problems) > 0 {
		return nil, &Problems{DocumentPath: TransportDocumentPath, Lines: problems}
	}
	doc := Document{Path: TransportDocumentPath, Present: true, Root: root, Blank: len(root.Content) == 0 && len(environ) == 0}
	inst, err := Build(doc, environ, noText)
	if err != nil {
		return nil, err
	}
	if inst.Revision != t.Revision {
		return nil, fmt.Errorf("%w: the canonical form is %s, the snapshot says %s", ErrRevisionMismatch, inst.Revision, t.Revision)
	}
	return inst, nil
}

// noText is the DecodeText of a rebuilt installation: the policy comes as a
// document node, never as the variable's text.
func noText(string) (*doctree.Node, error) {
	return nil, errors.New("the transport form carries no policy text")
}

// settingByVariable finds the setting of a variable.
func settingByVariable(variable string) (setting, bool) {
	for _, s := range settings {
		if s.Variable == variable {
			return s, true
		}
	}
	return setting{}, false
}

// gateNode turns a gate's canonical value, a list of [namespace, [names]]
// pairs, into the document's map of namespace to names (order kept).
func gateNode(v *doctree.Node) (*doctree.Node, error) {
	const want = "a list of [namespace, [names]] pairs is required"
	if v.Kind != doctree.Sequence {
		return nil, errors.New(want)
	}
	out := &doctree.Node{Kind: doctree.Mapping}
	for _, pair := range v.Content {
		if pair.Kind != doctree.Sequence || len(pair.Content) != 2 || pair.Content[0].Kind != doctree.Scalar || pair.Content[1].Kind != doctree.Sequence {
			return nil, errors.New(want)
		}
		out.Content = append(out.Content, pair.Content[0], pair.Content[1])
	}
	return out, nil
}

type member struct {
	key   string
	value *doctree.Node
}

// decodeMembers decodes a JSON object into its members, in order, each
// value as a document tree (numbers keep their literal text).
func decodeMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := jsonNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the object")
	}
	if n.Kind != doctree.Mapping {
		return nil, errors.New("not an object")
	}
	out := make([]member, 0, len(n.Content)/2)
	for _, p := range doctree.Pairs(n) {
		out = append(out, member{key: p.Key, value: p.Value})
	}
	return out, nil
}

// maxDepth bounds the nesting of a canonical form (the deepest real one,
// envPolicy's rules, is 5 levels).
const maxDepth = 32

// jsonNode reads one JSON value from dec as a document node.
func jsonNode(dec *json.Decoder, depth int) (*doctree.Node, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &doctree.Node{Kind: doctree.Mapping}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				val, err := jsonNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &doctree.Node{Kind: doctree.Scalar, Tag: "!!str", Value: key}, val)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &doctree.Node{Kind: doctree.Sequence}
			for dec.More() {
				val, err := jsonNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, val)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", v)
	case string:
		return &doctree.Node{Kind: doctree.Scalar, Tag: "!!str", Value: v}, nil
	case json.Number:
		tag := "!!int"
		if _, err := strconv.ParseInt(v.String(), 10, 64); err != nil {
			tag = "!!float"
		}
		return &doctree.Node{Kind: doctree.Scalar, Tag: tag, Value: v.String()}, nil
	case bool:
		return &doctree.Node{Kind: doctree.Scalar, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	case nil:
		return &doctree.Node{Kind: doctree.Scalar, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
