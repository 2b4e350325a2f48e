package facts

import kjson "sigs.k8s.io/json"

// unmarshal decodes the admitted object the way the API server does: member
// names match case-sensitively (encoding/json would also take "Metadata" or
// "ARGS"), so what the facts and the patch target see is exactly what the
// raw JSON holds, and every op path built from them exists in it.
func unmarshal(raw []byte, v any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, v)
}
