package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/classloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// The memory figures mean something only if the decider accepts what it is
// measured with: the generated classes and the big document must load.

func TestTheGeneratedClassesAreAThousandValidClasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "classes.yaml")
	if err := writeClasses(path, 1000); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := classloader.Parse(path, data)
	if err != nil {
		t.Fatalf("the generated classes do not load: %v", err)
	}
	if n := len(set.All()); n != 1000 {
		t.Errorf("%d classes loaded, want 1000", n)
	}
}

func TestTheBigInstallationIsAValidDocumentOfAtLeastTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "installation.yaml")
	size, err := writeBigInstallation(path, "../dynamic-config/default-installation.yaml", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(size) || size < 1<<20 {
		t.Fatalf("the document is %d bytes (stat %v, %v), want at least 1 MiB", size, fi, err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: path, DocumentExplicit: true})
	if err != nil {
		t.Fatalf("the big installation does not load: %v", err)
	}
	if inst == nil {
		t.Fatal("no installation")
	}
}

func TestResidentMemoryIsReadFromThisProcess(t *testing.T) {
	rss, hwm, err := residentKiB(os.Getpid())
	if err != nil || rss <= 0 || hwm < rss {
		t.Errorf("residentKiB = %d, %d, %v; want RSS > 0 and peak ≥ RSS", rss, hwm, err)
	}
}
