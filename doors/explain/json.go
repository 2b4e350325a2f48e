package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// WriteYAML prints WriteJSON's objects as YAML, one document
// per manifest document, separated by ---.
func WriteYAML(w io.Writer, results []*Explanation) error {
	docs := make([][]byte, 0, len(results))
	for _, x := range results {
		var b bytes.Buffer
		if err := WriteJSON(&b, []*Explanation{x}); err != nil {
			return err
		}
		docs = append(docs, b.Bytes())
	}
	return manifest.WriteYAMLStream(w, docs, func(int) string { return "encode the explanation as YAML" })
}

// WriteJSON prints protojson DecisionResponses: one object per
// document ({"mutate": …, "validate": …, "template": a workload's pod
// template pointer, "injected": a running pod's {"revision", "active",
// "differs"}, "webhook": {"path", "reached", "blocked", "provided"},
// "templateWebhook": /mutate's reach of a workload's pods}), a JSON array
// for several. A workload's mutate is the decision on the pods it creates.
// A document explain passes over is {"kind", "passedOver"}.
func WriteJSON(w io.Writer, results []*Explanation) error {
	objects := make([]json.RawMessage, 0, len(results))
	for _, x := range results {
		var b bytes.Buffer
		if x.PassedOver != "" {
			data, err := json.Marshal(map[string]string{"kind": x.Kind, "passedOver": x.PassedOver})
			if err != nil {
				return err
			}
			objects = append(objects, data)
			continue
		}
		b.WriteByte('{')
		for _, part := range []struct {
			name string
			resp *deciderv1.DecisionResponse
		}{{"mutate", x.Mutate}, {"validate", x.Validate}} {
			if part.resp == nil {
				continue
			}
			data, err := protojson.Marshal(part.resp)
			if err != nil {
				return fmt.Errorf("encode the %s decision: %w", part.name, err)
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", part.name)
			b.Write(data)
		}
		if x.Template != "" {
			fmt.Fprintf(&b, `,"template":%q`, x.Template)
		}
		if x.Injected != nil {
			data, err := json.Marshal(x.Injected)
			if err != nil {
				return err
			}
			b.WriteString(`,"injected":`)
			b.Write(data)
		}
		for _, part := range []struct {
			name  string
			reach *webhookscope.Reach
		}{{"webhook", x.Reach}, {"templateWebhook", x.TemplateReach}} {
			if part.reach == nil {
				continue
			}
			data, err := json.Marshal(part.reach)
			if err != nil {
				return err
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", part.name)
			b.Write(data)
		}
		b.WriteByte('}')
		objects = append(objects, b.Bytes())
	}
	var compact []byte
	if len(objects) == 1 {
		compact = objects[0]
	} else {
		var err error
		if compact, err = json.Marshal(objects); err != nil {
			return err
		}
	}
	return manifest.WriteIndentedJSON(w, compact)
}
