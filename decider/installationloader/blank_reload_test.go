package installationloader

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"strings"
	"testing"
	"time"
)

// A truncated document must never swap in the empty installation (02 §11 as
// amended by issue 17): a blank file is the empty document at start only.
func TestReloadRefusesADocumentThatBecameBlank(t *testing.T) {
	for _, blank := range []struct{ name, content string }{
		{"an empty file", ""},
		{"a whitespace-only file", " \n\t\n  \n"},
	} {
		t.Run("truncating to "+blank.name+" keeps the last good installation", func(t *testing.T) {
			path := writeDoc(t, "installation.yaml", "watchSeconds: \"30\"\nsourceAllow: \"*: consul\"\n")
			store, rec, logs := watching(t, path, 20*time.Millisecond)
			good := store.Current()
			write(t, path, blank.content)
			eventually(t, "the rejection", func() bool { lr := store.LastReload(); return lr != nil && !lr.OK })
			if store.Current() != good {
				t.Fatal("the blank document swapped in the empty installation")
			}
			if _, rej, _ := rec.counts(); rej != 1 {
				t.Errorf("the reload-failure observer counted %d rejections, want 1", rej)
			}
			lr := store.LastReload()
			if len(lr.Problems) != 1 || lr.Problems[0] != "the document became empty; write {} to mean the empty installation" {
				t.Errorf("last reload problems %q", lr.Problems)
			}
			if lr.AttemptedRevision != "" {
				t.Errorf("a blank document refused reports attempted revision %q, want none", lr.AttemptedRevision)
			}
			out := logs.String()
			if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "the document became empty") {
				t.Errorf("no ERROR line naming the truncation: %s", out)
			}
		})
	}

	t.Run("writing {} empties the installation on purpose", func(t *testing.T) {
		path := writeDoc(t, "installation.yaml", "watchSeconds: \"30\"\n")
		store, _, _ := watching(t, path, 20*time.Millisecond)
		write(t, path, "{}\n")
		// The reload is recorded after the swap (watch.go): wait for both.
		eventually(t, "the swap and its record", func() bool {
			return store.Current().Revision == installation.EmptyRevision && store.LastReload() != nil
		})
		if lr := store.LastReload(); !lr.OK {
			t.Errorf("last reload %+v", lr)
		}
		t.Run("and from {} a blank file is still refused", func(t *testing.T) {
			write(t, path, "\n")
			eventually(t, "the rejection", func() bool { return !store.LastReload().OK })
		})
	})

	t.Run("a document blank at start stays the empty document, and may stay blank", func(t *testing.T) {
		path := writeDoc(t, "installation.yaml", "")
		store, _, _ := watching(t, path, 20*time.Millisecond)
		if store.Current().Revision != installation.EmptyRevision || !store.Current().DocumentBlank {
			t.Fatalf("start: %s blank=%v", store.Current().Revision, store.Current().DocumentBlank)
		}
		write(t, path, "   \n")
		eventually(t, "the unchanged reload", func() bool { lr := store.LastReload(); return lr != nil && lr.OK })
		write(t, path, "watchSeconds: \"30\"\n")
		eventually(t, "the swap", func() bool { return store.Current().Revision != installation.EmptyRevision })
		write(t, path, "")
		eventually(t, "the rejection once a real document was in force", func() bool { return !store.LastReload().OK })
	})
}

func TestAFailedParseReportsNoAttemptedRevision(t *testing.T) {
	cases := []struct{ name, file, content string }{
		{"invalid YAML", "installation.yaml", "watchSeconds: [\n"},
		{"invalid JSON", "installation.json", "{\"watchSeconds\": \n"},
	}
	for _, c := range cases {
		t.Run(c.name+" has no attempted revision", func(t *testing.T) {
			_, err := Load(Options{DocumentPath: writeDoc(t, c.file, c.content), DocumentExplicit: true})
			p, ok := err.(*installation.Problems)
			if !ok {
				t.Fatalf("Load: %v", err)
			}
			if p.AttemptedRevision != "" {
				t.Errorf("attempted revision %q, want none (the empty installation was not attempted)", p.AttemptedRevision)
			}
		})
	}
	t.Run("a document that parses but is invalid still names its attempt", func(t *testing.T) {
		_, err := Load(Options{DocumentPath: writeDoc(t, "installation.yaml", "watchSeconds: soon\n"), DocumentExplicit: true})
		p, ok := err.(*installation.Problems)
		if !ok || !strings.HasPrefix(p.AttemptedRevision, "sha256:") || p.AttemptedRevision == installation.EmptyRevision {
			t.Fatalf("Load: %v (attempted %q)", err, p.AttemptedRevision)
		}
	})
}
