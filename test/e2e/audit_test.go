package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Verb      string `json:"verb"`
	Stage     string `json:"stage"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// auditAnnotations returns the audit annotations of the completed create of
// resource ns/name (the last one, when there were several attempts), waiting
// briefly for the API server to write it.
func auditAnnotations(t *testing.T, resource, ns, name string) map[string]string {
	t.Helper()
	var found *auditEvent
	err := eventually("the audit event of "+resource+" "+ns+"/"+name, 10*time.Second, 100*time.Millisecond, func() error {
		f, err := os.Open(theCluster.auditLog)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		found = nil
		for sc.Scan() {
			var e auditEvent
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if e.Verb == "create" && e.Stage == "ResponseComplete" && e.ObjectRef.Resource == resource &&
				e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name {
				found = &e
			}
		}
		if found == nil {
			return fmt.Errorf("no ResponseComplete create event yet")
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return found.Annotations
}
