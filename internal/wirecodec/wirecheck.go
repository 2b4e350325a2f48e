package wirecodec

import (
	"errors"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

var (
	errInvalidUTF8   = errors.New("wirecodec: string field contains invalid UTF-8")
	errMalformed     = errors.New("wirecodec: malformed wire data")
	errTooDeep       = errors.New("wirecodec: message nested too deeply")
	errWrongWireType = errors.New("wirecodec: a known field with another wire type")
	errUnknownField  = errors.New("wirecodec: a field the message type does not have")
)

// checkWire walks the wire encoding b of a message of type md and fails when
// a string field that must be valid UTF-8 (every string of a proto3 file) is
// not, in md or any message nested in it (map entries included), when b is
// not well-formed wire data, when a known field comes with another wire type
// than its own, or when a field is unknown. The generated code differs from
// proto.Unmarshal on the last two: on a field with another wire type it fails
// or, in a map entry, reads it as the field it names, where proto keeps an
// unknown field; and it keeps an unknown field's bytes as sent, where proto
// re-encodes a tag sent in more bytes than it needs (both found by
// FuzzTheCodecUnmarshalsLikeProto). The codec leaves those messages to
// proto: a peer of the same version never sends them, a newer one pays
// reflection for its new fields. It does not allocate once md's table is
// built.
func checkWire(b []byte, md protoreflect.MessageDescriptor) error {
	return tableOf(md).check(b, protowire.DefaultRecursionLimit, nil)
}

// checkReceived is checkWire of a received message, which also counts the
// entries of the pod's lists (countedFields) and fails with the
// *podcaps.Error of a pod above the caps before anything is unmarshalled:
// a 12 MB request of 6 M empty containers took the decider to 1.28 GB
// (issue 38). The caps come first: a message the codec would otherwise
// leave to proto (an unknown field, a wire type, invalid UTF-8) is walked
// to its end to count it, and one that is malformed is refused by its
// caps as far as it could be read — proto would unmarshal that far.
func checkReceived(b []byte, md protoreflect.MessageDescriptor) error {
	var counts podcaps.Counts
	err := tableOf(md).check(b, protowire.DefaultRecursionLimit, &counts)
	if capped := counts.Check(); capped != nil {
		return capped
	}
	return err
}

// countedFields are the repeated fields of the wire the pod caps count, by
// the pod field they carry (a map's entries are its repeated field's).
var countedFields = map[protoreflect.FullName]podcaps.Field{
	"dynamicconfig.decider.v1.PodFacts.containers":               podcaps.Containers,
	"dynamicconfig.decider.v1.PodFacts.init_containers":          podcaps.InitContainers,
	"dynamicconfig.decider.v1.PodFacts.ephemeral_containers":     podcaps.EphemeralContainers,
	"dynamicconfig.decider.v1.PodFacts.volume_names":             podcaps.Volumes,
	"dynamicconfig.decider.v1.PodFacts.image_pull_secret_names":  podcaps.ImagePullSecrets,
	"dynamicconfig.decider.v1.PodFacts.supplemental_groups":      podcaps.SupplementalGroups,
	"dynamicconfig.decider.v1.PodFacts.labels":                   podcaps.Labels,
	"dynamicconfig.decider.v1.PodFacts.annotations":              podcaps.Annotations,
	"dynamicconfig.decider.v1.PodFacts.workload_annotation_keys": podcaps.Annotations,
	"dynamicconfig.decider.v1.Container.env":                     podcaps.Env,
	"dynamicconfig.decider.v1.Container.volume_mount_paths":      podcaps.VolumeMounts,
	"dynamicconfig.decider.v1.Container.command":                 podcaps.Command,
	"dynamicconfig.decider.v1.Container.args":                    podcaps.Args,
}

// A checkTable says, per field number of one message type, which wire types
// the field may come with and what the check does with a length-delimited
// one: nothing, check a string, or walk a nested message with the nested
// type's table. It is built once per type from the descriptors (walking them
// on every message cost a third of the codec's time).
type checkTable struct {
	byNumber []fieldCheck // index: field number
	sparse   map[protowire.Number]fieldCheck
}

type fieldCheck struct {
	wire    wireTypes   // the wire types the field may come with; none: not a field of the type (unknown)
	utf8    bool        // a string that must be valid UTF-8
	nested  *checkTable // a message (or map entry) to walk
	counted bool        // an entry of a pod list the caps count, as field
	field   podcaps.Field
	// packedVarints: a repeated varint field, whose length-delimited
	// (packed) record holds many entries, each counted.
	packedVarints bool
}

// wireTypes is a set of wire types, bit n for protowire.Type n.
type wireTypes uint8

func (w wireTypes) has(t protowire.Type) bool { return t < 8 && w&(1<<t) != 0 }

// wireTypesOf is the wire types proto.Unmarshal reads fd from: its kind's
// own, and length-delimited (packed) for a repeated scalar too.
func wireTypesOf(fd protoreflect.FieldDescriptor) wireTypes {
	var own protowire.Type
	switch fd.Kind() {
	case protoreflect.BoolKind, protoreflect.EnumKind,
		protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Uint32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		own = protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		own = protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		own = protowire.Fixed64Type
	case protoreflect.GroupKind:
		own = protowire.StartGroupType
	default: // string, bytes, message
		return 1 << protowire.BytesType
	}
	w := wireTypes(1) << own
	if fd.IsList() && own != protowire.StartGroupType {
		w |= 1 << protowire.BytesType
	}
	return w
}

// denseLimit bounds byNumber; a field numbered above it (none of ours is) is
// looked up in sparse instead.
const denseLimit = 1 << 10

// tables caches the table of every message type checked so far.
var tables sync.Map // protoreflect.FullName → *checkTable

func tableOf(md protoreflect.MessageDescriptor) *checkTable {
	if t, ok := tables.Load(md.FullName()); ok {
		return t.(*checkTable)
	}
	t := buildTable(md, map[protoreflect.FullName]*checkTable{})
	actual, _ := tables.LoadOrStore(md.FullName(), t)
	return actual.(*checkTable)
}

// buildTable builds md's table and those of the types nested in it; building
// holds the tables under construction, so that a recursive type refers to its
// own table.
func buildTable(md protoreflect.MessageDescriptor, building map[protoreflect.FullName]*checkTable) *checkTable {
	if t, ok := building[md.FullName()]; ok {
		return t
	}
	t := &checkTable{}
	building[md.FullName()] = t
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		fc := fieldCheck{wire: wireTypesOf(fd)}
		fc.field, fc.counted = countedFields[fd.FullName()]
		fc.packedVarints = fd.IsList() && fc.wire.has(protowire.VarintType)
		switch fd.Kind() {
		case protoreflect.StringKind:
			fc.utf8 = enforceUTF8(fd)
		case protoreflect.MessageKind:
			fc.nested = buildTable(fd.Message(), building)
		default:
			// bytes, groups (not length-delimited), packed scalars: nothing
			// to check.
		}
		t.set(fd.Number(), fc)
	}
	return t
}

func (t *checkTable) set(num protowire.Number, fc fieldCheck) {
	if num > denseLimit {
		if t.sparse == nil {
			t.sparse = map[protowire.Number]fieldCheck{}
		}
		t.sparse[num] = fc
		return
	}
	if int(num) >= len(t.byNumber) {
		t.byNumber = append(t.byNumber, make([]fieldCheck, int(num)+1-len(t.byNumber))...)
	}
	t.byNumber[num] = fc
}

func (t *checkTable) field(num protowire.Number) fieldCheck {
	if int(num) < len(t.byNumber) {
		return t.byNumber[num]
	}
	return t.sparse[num] // the zero fieldCheck when absent, nil map included
}

// check walks b. A malformed message or one nested too deeply ends the walk
// with its error; an unknown field, a known one with another wire type or
// invalid UTF-8 is remembered, the first one returned, and the walk goes on,
// so that counts (nil: nothing counted) holds every counted entry of b.
func (t *checkTable) check(b []byte, depth int, counts *podcaps.Counts) error {
	if depth < 0 {
		return errTooDeep
	}
	var first error // the first of the errors that do not end the walk
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > protowire.MaxValidNumber {
			return errMalformed
		}
		b = b[n:]
		fc := t.field(num)
		if fc.wire == 0 || !fc.wire.has(typ) {
			if first == nil {
				first = errUnknownField
				if fc.wire != 0 {
					first = errWrongWireType
				}
			}
			if counts == nil {
				return first
			}
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errMalformed
			}
			b = b[n:]
			continue
		}
		if fc.counted && counts != nil {
			counts[fc.field]++
		}
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errMalformed
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		if fc.counted && fc.packedVarints && counts != nil {
			counts[fc.field] += packedCount(v) - 1 // the record was counted as one
		}
		if fc.utf8 && !utf8.Valid(v) && first == nil {
			first = errInvalidUTF8
			if counts == nil {
				return first
			}
		}
		if fc.nested != nil {
			if err := fc.nested.check(v, depth-1, counts); err != nil {
				if !deferrable(err) || counts == nil {
					return err
				}
				if first == nil {
					first = err
				}
			}
		}
	}
	return first
}

// packedCount is how many varints a packed record holds, as far as they
// are whole (proto.Unmarshal refuses the record if one is not).
func packedCount(v []byte) int {
	n := 0
	for len(v) > 0 {
		_, k := protowire.ConsumeVarint(v)
		if k < 0 {
			break
		}
		v, n = v[k:], n+1
	}
	return n
}

// deferrable reports whether err leaves the walk going (see check).
func deferrable(err error) bool {
	return err == errUnknownField || err == errWrongWireType || err == errInvalidUTF8
}

// enforceUTF8 reports whether fd's strings must be valid UTF-8: always in a
// proto3 file, never in a proto2 one, and as the field's features say in an
// editions file (protobuf-go's rule).
func enforceUTF8(fd protoreflect.FieldDescriptor) bool {
	switch fd.Syntax() {
	case protoreflect.Proto3:
		return true
	case protoreflect.Editions:
		if e, ok := fd.(interface{ EnforceUTF8() bool }); ok {
			return e.EnforceUTF8()
		}
		return true
	default:
		return false
	}
}
