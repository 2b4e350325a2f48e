package installationloader

import (
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

// pinnedAfterPadding is a document whose sourceAllow gate comes after 6 MB
// of comments: every prefix that ends in the comments is a valid document
// without the gate (issue 38: "pins after the cut vanished").
func pinnedAfterPadding(source string) []byte {
	var b strings.Builder
	b.WriteString("watchSeconds: \"30\"\n")
	line := "# " + strings.Repeat("padding ", 12) + "\n"
	for b.Len() < 6<<20 {
		b.WriteString(line)
	}
	b.WriteString("sourceAllow: \"*: " + source + "\"\n")
	return []byte(b.String())
}

// Issue 38: a document rewritten in place (6 MB, 64 KiB chunks) was put in
// force as its valid prefix 5 times out of 5. Every revision put in force
// while it is rewritten, five times over, is one of the two whole documents.
func TestADocumentRewrittenInPlaceIsNeverPutInForceAsAPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("rewrites a 6 MB document five times")
	}
	consul, vault := pinnedAfterPadding("consul"), pinnedAfterPadding("vault")
	path := writeDoc(t, "installation.yaml", string(consul))
	store, rec, _ := watching(t, path, 10*time.Millisecond)
	whole := map[string]bool{store.Current().Revision: true}
	for round := range 5 {
		content := vault
		if round%2 == 1 {
			content = consul
		}
		// 96 chunks 2 ms apart: the watcher reads the document mid-write.
		testfile.RewriteInPlace(t, path, content, 64<<10, 2*time.Millisecond)
		inst, err := Load(Options{DocumentPath: path, DocumentExplicit: true})
		if err != nil {
			t.Fatal(err)
		}
		whole[inst.Revision] = true
		eventually(t, "the whole document in force", func() bool { return store.Current().Revision == inst.Revision })
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	prefixes := 0
	for _, r := range rec.inForce {
		if !whole[r] {
			prefixes++
		}
	}
	t.Logf("%d revisions put in force over 5 in-place rewrites, %d of them a prefix's", len(rec.inForce), prefixes)
	if prefixes > 0 {
		t.Errorf("%d revisions of a half-written document were put in force", prefixes)
	}
}

func TestLoadSettledWaitsForADocumentBeingWritten(t *testing.T) {
	consul := pinnedAfterPadding("consul")
	path := writeDoc(t, "installation.yaml", "watchSeconds: \"30\"\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		testfile.RewriteInPlace(t, path, consul, 64<<10, 2*time.Millisecond)
	}()
	time.Sleep(20 * time.Millisecond) // the writer is at work
	inst, err := LoadSettled(Options{DocumentPath: path, DocumentExplicit: true})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(Options{DocumentPath: path, DocumentExplicit: true})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Revision != want.Revision {
		t.Errorf("LoadSettled put %s in force, not the whole document's %s", inst.Revision, want.Revision)
	}
}
