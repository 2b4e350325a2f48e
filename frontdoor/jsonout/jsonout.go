// Package jsonout writes JSON by appending, without reflection: the front
// door's answers (the AdmissionReview envelope, frontdoor/review) and the
// patch inside them (frontdoor/patch). What it writes is byte for byte what
// encoding/json writes with HTML escaping off (Marshal): compact, members in
// ascending byte order, no trailing newline.
package jsonout

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Every admission writes one answer, and the patch inside it: the appenders
// below write what Marshal writes for the same value — jsonout_test.go and
// FuzzAppendValue hold the two together.

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

// Marshal writes any value the way every answer is written: compact, HTML
// escaping off, no trailing newline. Maps come out with sorted keys.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
