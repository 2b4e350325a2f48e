package classes

import (
	"errors"
	"testing"
)

func TestTheStoreIsOffOnlyWhenNil(t *testing.T) {
	var off *Store
	if off.Enabled() || off.Current() != nil || !off.Synced() {
		t.Error("a nil store is not off")
	}
	p := NewPendingStore()
	if !p.Enabled() || p.Current() != nil || p.Synced() {
		t.Error("a pending store is not on-and-unsynced")
	}
	p.Swap(NewSet(nil))
	if !p.Synced() || p.Current() == nil {
		t.Error("a swapped store is not synced")
	}
	p.TurnOff()
	if p.Enabled() || !p.Synced() {
		t.Error("TurnOff did not turn it off")
	}
}

func TestFromDocumentsNumbersDocumentsAndStopsAtTheUndecodableOne(t *testing.T) {
	class := map[string]any{"apiVersion": "dynamic-config.rs/v1alpha1", "kind": "ClusterDynamicConfigClass",
		"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"source": "nats", "endpoint": "nats://n:4222"}}
	tests := []struct {
		name string
		docs []Document
		want string // "" = accepted
	}{
		{"one class is a set", []Document{{Object: class}}, ""},
		{"no documents are the empty set", nil, ""},
		{"a document that is not an object is a problem", []Document{{Object: class}, {}},
			"f.yaml: document 2: not an object"},
		{"an undecodable document ends the reading", []Document{{}, {Err: errors.New("bad indent")}},
			"f.yaml: document 1: not an object\nf.yaml: document 2: bad indent"},
		{"a list item that is not an object is a problem", []Document{{Object: map[string]any{"kind": "List", "items": []any{1, class}}}},
			"f.yaml: document 1.1: not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := FromDocuments("f.yaml", tt.docs)
			if tt.want == "" {
				if err != nil || set == nil {
					t.Fatalf("set %v, err %v", set, err)
				}
				return
			}
			if set != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("set %v, err %v; want %q", set, err, tt.want)
			}
		})
	}
}
