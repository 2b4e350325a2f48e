package facts

import (
	"bytes"
	"encoding/json"
	"errors"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// The admitted object's lists are counted before it is decoded (issue 38): a
// 1.49 MB pod of 50 000 containers took a front door of 64 MiB down in a
// second, and a 0.5 MiB review of empty containers sent straight to its port
// in 0.6 s — encoding/json builds every element before anyone can count the
// slice. A pod above the caps (internal/podcaps) is refused before a single
// element is built; the count reads the JSON once, allocating nothing (an
// escaped member name aside), and only an object long enough to hold a pod
// above the caps is read at all (countFrom).

// countFrom is the shortest object that can hold a pod above the caps. Each
// counted entry owns at least one byte of the JSON (its first), and takes at
// most maxFloor bytes stored, so an object of n bytes counts at most
// n × maxFloor stored bytes: below StoredPodBytes / maxFloor, it cannot be
// above the caps. A typical pod (a few KiB) is never read twice.
var countFrom = func() int {
	maxFloor := 0
	for _, f := range podcaps.Fields() {
		maxFloor = max(maxFloor, f.Floor())
	}
	return podcaps.StoredPodBytes / maxFloor
}()

// A countNode is where the count is in the object: the members it goes
// into, and whether the value here is a counted list (an array's elements
// or, for a map, an object's members) and what each element is.
type countNode struct {
	members map[string]*countNode
	counted bool
	field   podcaps.Field
	elem    *countNode
	// prefixed asks, of a map, whether a key starts with the annotation
	// prefix (HasPrefixedAnnotation).
	prefixed bool
}

func list(f podcaps.Field, elem *countNode) *countNode {
	return &countNode{counted: true, field: f, elem: elem}
}

func object(members map[string]*countNode) *countNode { return &countNode{members: members} }

var (
	countedMeta      = object(map[string]*countNode{"labels": list(podcaps.Labels, nil), "annotations": list(podcaps.Annotations, nil)})
	countedContainer = object(map[string]*countNode{
		"env":          list(podcaps.Env, nil),
		"volumeMounts": list(podcaps.VolumeMounts, nil),
		"command":      list(podcaps.Command, nil),
		"args":         list(podcaps.Args, nil),
		"resources": object(map[string]*countNode{
			"limits":   list(podcaps.Resources, nil),
			"requests": list(podcaps.Resources, nil),
			"claims":   list(podcaps.Resources, nil),
		}),
	})
	countedSpec = object(map[string]*countNode{
		"containers":          list(podcaps.Containers, countedContainer),
		"initContainers":      list(podcaps.InitContainers, countedContainer),
		"ephemeralContainers": list(podcaps.EphemeralContainers, countedContainer),
		"volumes":             list(podcaps.Volumes, nil),
		"imagePullSecrets":    list(podcaps.ImagePullSecrets, nil),
		"securityContext":     object(map[string]*countNode{"supplementalGroups": list(podcaps.SupplementalGroups, nil)}),
	})
	// countedPod is a Pod, and a pod template.
	countedPod = object(map[string]*countNode{"metadata": countedMeta, "spec": countedSpec})
	// countedWorkload is a workload with spec.template (apps, Job,
	// ReplicationController), countedCronJob a CronJob.
	countedWorkload = object(map[string]*countNode{"metadata": countedMeta, "spec": object(map[string]*countNode{"template": countedPod})})
	countedCronJob  = object(map[string]*countNode{"metadata": countedMeta, "spec": object(map[string]*countNode{
		"jobTemplate": object(map[string]*countNode{"spec": object(map[string]*countNode{"template": countedPod})}),
	})})
	// prefixedAnnotations finds a prefixed key in metadata.annotations.
	prefixedAnnotations = object(map[string]*countNode{"metadata": object(map[string]*countNode{"annotations": {prefixed: true}})})
)

// countTree is the tree of kind.
func countTree(kind *Kind) *countNode {
	switch {
	case kind.IsPod():
		return countedPod
	case kind.Resource == deciderv1.ResourceKind_RESOURCE_KIND_CRON_JOB:
		return countedCronJob
	default:
		return countedWorkload
	}
}

// checkCaps counts raw's lists as kind and is the *podcaps.Error of an
// object above the caps. What is not JSON, or not of the kind's shape, is
// left to the decode, which names it as it always did (and refuses what is
// not JSON before it builds anything).
func checkCaps(kind *Kind, raw []byte) error {
	if len(raw) < countFrom || !json.Valid(raw) {
		return nil
	}
	counts := countLists(kind, raw)
	return counts.Check()
}

// countLists counts raw's lists as kind, as far as raw is JSON.
func countLists(kind *Kind, raw []byte) podcaps.Counts {
	var counts podcaps.Counts
	s := counter{b: raw, counts: &counts}
	s.text(countTree(kind))
	return counts
}

// hasPrefixedKey reports whether raw is a JSON object (or null) whose
// metadata.annotations holds a key with the annotation prefix, where
// metadata and annotations, when present, are objects or null: what a
// decode of metadata.annotations alone into a map reads, without building
// the map.
func hasPrefixedKey(raw []byte) bool {
	if !json.Valid(raw) {
		return false
	}
	var counts podcaps.Counts
	s := counter{b: raw, counts: &counts}
	s.text(prefixedAnnotations)
	return s.found && !s.mismatch && s.err == nil
}

// maxDepth is encoding/json's nesting bound (and the API server's decoder's):
// deeper is not JSON it reads.
const maxDepth = 10000

// errNotJSON ends a count: the rest is the decode's to refuse.
var errNotJSON = errors.New("not JSON")

// counter reads one JSON text, counting into counts what its tree says.
type counter struct {
	b      []byte
	i      int
	depth  int
	counts *podcaps.Counts
	// found is set when a key of a prefixed map starts with the annotation
	// prefix; mismatch when a value the tree goes into is neither of the
	// kind it expects nor null; err when the text is not JSON.
	found, mismatch bool
	err             error
}

// text reads the whole text: one value, then only white space.
func (s *counter) text(n *countNode) {
	s.value(n)
	s.space()
	if s.i != len(s.b) {
		s.fail()
	}
}

func (s *counter) fail() {
	if s.err == nil {
		s.err = errNotJSON
	}
	s.i = len(s.b)
}

func (s *counter) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value; n says what to count in it (nil: nothing).
func (s *counter) value(n *countNode) {
	s.space()
	if s.i >= len(s.b) {
		s.fail()
		return
	}
	if n == nil {
		s.skip()
		return
	}
	c := s.b[s.i]
	switch {
	case c == '{' && (n.members != nil || n.prefixed || (n.counted && n.elem == nil)):
		s.nested(func() { s.object(n) })
	case c == '[' && n.counted:
		s.nested(func() { s.array(n) })
	case c == 'n':
		s.literal("null")
	default:
		s.mismatch = true
		s.skip()
	}
}

// nested reads an object or an array one level deeper.
func (s *counter) nested(read func()) {
	s.depth++
	if s.depth > maxDepth {
		s.fail()
		return
	}
	read()
	s.depth--
}

// object reads an object: a map's members are counted (and their keys
// looked at when prefixed), a struct's members followed.
func (s *counter) object(n *countNode) {
	s.i++ // {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return
	}
	for s.i < len(s.b) {
		s.space()
		key, ok := s.key()
		if !ok {
			s.fail()
			return
		}
		if n.counted {
			s.counts[n.field]++
		}
		if n.prefixed && bytes.HasPrefix(key, prefix) {
			s.found = true
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.fail()
			return
		}
		s.i++
		var child *countNode
		if n.members != nil {
			child = n.members[string(key)]
		}
		s.value(child)
		s.space()
		if s.i >= len(s.b) {
			s.fail()
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail()
			return
		}
	}
	s.fail()
}

// prefix is annotation.Prefix as bytes.
var prefix = []byte(annotation.Prefix)

// array reads an array, counting its elements.
func (s *counter) array(n *countNode) {
	s.i++ // [
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return
	}
	for s.i < len(s.b) {
		s.counts[n.field]++
		s.value(n.elem)
		s.space()
		if s.i >= len(s.b) {
			s.fail()
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.fail()
			return
		}
	}
	s.fail()
}

// key reads an object's member name, unescaped: a name with an escape is
// the only allocation of a count.
func (s *counter) key() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i
	escaped, ok := s.str()
	if !ok {
		return nil, false
	}
	raw := s.b[start:s.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return nil, false
	}
	return []byte(k), true
}

// str reads a string at s.i; escaped says whether it holds an escape.
func (s *counter) str() (escaped, ok bool) {
	s.i++ // "
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.i++
			return escaped, true
		case '\\':
			escaped = true
			s.i += 2
		default:
			s.i++
		}
	}
	return false, false
}

func (s *counter) literal(word string) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.fail()
		return
	}
	s.i += len(word)
}

// skip reads one value of any kind without looking into it; a number or a
// literal is taken whole up to the next delimiter (the decode checks it).
func (s *counter) skip() {
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if _, ok := s.str(); !ok {
				s.fail()
				return
			}
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
			if s.depth+depth > maxDepth {
				s.fail()
				return
			}
		case '}', ']':
			if depth == 0 {
				return // the end of the value that holds this one
			}
			depth--
			if depth == 0 {
				s.i++
				return
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
	if depth != 0 {
		s.fail()
	}
}
