package installation

import (
	"bytes"
	"encoding/json"
)

// encodeCanonical serialises the canonical form of spec 02 §10: compact JSON,
// object keys in byte order (encoding/json sorts map keys), no HTML escaping.
func encodeCanonical(canon map[string]any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canon); err != nil {
		// Every member is a string, a map of strings, a list of strings or
		// the env policy's own canonical JSON: encoding cannot fail.
		panic("installation: canonical form: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
