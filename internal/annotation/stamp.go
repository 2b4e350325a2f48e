package annotation

import "strings"

// The revision stamp (spec 10 §8): every injected pod carries, beside the
// status mark, the first StampDigits hex digits of the revision of the
// installation that decided it. The pure core writes it into the plan; the
// audit reads it back from pod metadata.
const (
	// RevisionStampKey is the stamp's annotation key.
	RevisionStampKey = Prefix + "revision"
	// StampDigits is how many hex digits of the revision the stamp keeps.
	StampDigits = 12
)

// Stamp is the revision stamp of an installation revision: the first
// StampDigits hex digits of its digest, without the "sha256:" (or any other
// algorithm's) prefix. A revision whose digest is shorter is kept whole.
func Stamp(revision string) string {
	if i := strings.LastIndexByte(revision, ':'); i >= 0 {
		revision = revision[i+1:]
	}
	if len(revision) > StampDigits {
		revision = revision[:StampDigits]
	}
	return revision
}
