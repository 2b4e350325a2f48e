package review

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// The answers are written by appending, without reflection: every admission
// writes one, and the patch inside it. The output is byte for byte what
// Marshal (encoding/json, HTML escaping off) writes for the same value —
// append_test.go and FuzzAppendValue hold the two together.

// AppendValue appends v as compact JSON. It writes the kinds answers and
// patches are built from — nil, string, bool, the integer types,
// map[string]any and map[string]string (members in ascending byte order),
// []any and []string — and hands anything else to encoding/json.
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		var small [16]string // the keys of a patch value's object fit: no allocation
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = AppendValue(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case map[string]string:
		if v == nil {
			return append(dst, "null"...), nil
		}
		return AppendStringMap(dst, v), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		if v == nil {
			return append(dst, "null"...), nil
		}
		return AppendStrings(dst, v), nil
	}
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// AppendStringMap writes m as a JSON object, members in ascending order.
func AppendStringMap(dst []byte, m map[string]string) []byte {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		dst = AppendString(dst, m[k])
	}
	return append(dst, '}')
}

// AppendStrings writes ss as a JSON array ([] when empty or nil).
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// AppendString quotes s as encoding/json does with HTML escaping off:
// quote, backslash and control characters escaped, invalid UTF-8 replaced
// by \ufffd, U+2028 and U+2029 escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendResponse writes the answer envelope (Encode) member by member, in
// the order and with the omissions of the struct tags of Review and
// Response.
func appendResponse(dst []byte, r *Response) []byte {
	dst = append(dst, `{"apiVersion":`...)
	dst = AppendString(dst, APIVersion)
	dst = append(dst, `,"kind":`...)
	dst = AppendString(dst, Kind)
	if r == nil {
		return append(dst, '}')
	}
	dst = append(dst, `,"response":{"allowed":`...)
	dst = strconv.AppendBool(dst, r.Allowed)
	if len(r.AuditAnnotations) > 0 {
		dst = append(dst, `,"auditAnnotations":`...)
		dst = AppendStringMap(dst, r.AuditAnnotations)
	}
	if r.Patch != "" {
		dst = append(dst, `,"patch":`...)
		dst = AppendString(dst, r.Patch)
	}
	if r.PatchType != "" {
		dst = append(dst, `,"patchType":`...)
		dst = AppendString(dst, r.PatchType)
	}
	if s := r.Status; s != nil {
		dst = append(dst, `,"status":{"code":`...)
		dst = strconv.AppendInt(dst, int64(s.Code), 10)
		dst = append(dst, `,"message":`...)
		dst = AppendString(dst, s.Message)
		dst = append(dst, `,"reason":`...)
		dst = AppendString(dst, s.Reason)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"uid":`...)
	dst = AppendString(dst, r.UID)
	if len(r.Warnings) > 0 {
		dst = append(dst, `,"warnings":`...)
		dst = AppendStrings(dst, r.Warnings)
	}
	return append(dst, `}}`...)
}
