package loopback_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
	"github.com/dynamic-config-admission/dynamic-config/test/loopback"
)

// jsonType names a decoded JSON value's type.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// logFieldTypes are the JSON types of every field of every line an admission
// and its decision write (spec 07 §4): a field that changes type (issue 20:
// duration_ms a string on the grpc call line, a number on the admission
// line) breaks every log query that compares it.
var logFieldTypes = map[string]map[string]string{
	"admission": {
		"time": "string", "level": "string", "msg": "string", "webhook": "string", "uid": "string", "kind": "string",
		"namespace": "string", "name": "string", "operation": "string", "dry_run": "bool", "outcome": "string",
		"reason": "string", "check": "string", "decision_id": "string", "revision": "string",
		"duration_ms": "number", "rpc_ms": "number", "patch_ops": "number", "warnings": "number",
		"trace_id": "string", "span_id": "string",
	},
	"decision": {
		"time": "string", "level": "string", "msg": "string", "decision_id": "string", "purpose": "string",
		"namespace": "string", "name": "string", "kind": "string", "outcome": "string", "skip_reason": "string",
		"reason": "string", "check": "string", "key": "string", "render": "string", "stores": "array",
		"revision": "string", "cluster": "string", "caller": "string", "duration_us": "number",
		"trace_id": "string", "span_id": "string",
	},
	"grpc call": {
		"time": "string", "level": "string", "msg": "string", "grpc_service": "string", "grpc_method": "string",
		"grpc_code": "string", "duration_ms": "number",
	},
}

func TestEveryLogLineKeepsItsFieldTypes(t *testing.T) {
	var out syncBuffer
	door := loopback.StartLogging(t, slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	// an injection, a refusal and a skip: every outcome's fields
	for _, name := range []string{"canonical-1-consul-sidecar", "refuse-malformed-watch-seconds", "skip-not-requested"} {
		c := cases.Named(name)
		door.Use(c.Installation(t), nil)
		namespace, pod := c.Pod(t)
		if _, err := engine.AdmitThrough(door.Door, nil, "log-fields", pod, namespace, cases.PodName(t, pod)); err != nil {
			t.Fatal(err)
		}
	}

	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, sc.Text())
		}
		msg, _ := line["msg"].(string)
		want, known := logFieldTypes[msg]
		if !known {
			continue // lines of other subsystems (startup, certificates)
		}
		seen[msg] = true
		keys := make([]string, 0, len(line))
		for k := range line {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if got := jsonType(line[k]); got != want[k] {
				t.Errorf("%q line: field %s is a JSON %s, want %s (%s)", msg, k, got, orUnknown(want[k]), sc.Text())
			}
		}
	}
	for msg := range logFieldTypes {
		if !seen[msg] {
			t.Errorf("no %q line was logged:\n%s", msg, out.String())
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "no such field"
	}
	return s
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
