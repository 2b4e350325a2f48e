package registry

// The bare names of the recognised keys outside the registry (spec 01 §1.1).
const (
	alsoName        = "also"
	alsoSectionName = "also-section"
	statusName      = "status"
	revisionName    = "revision"
)

// OtherKey is a recognised key outside the registry (spec 01 §1.1, §4–6):
// the suffixed form of a per-render key, also.<name>, also-section.<name>,
// the status mark and the revision stamp. Like a registry row it carries its own documentation, so
// the registry is the one source of every documented key.
type OtherKey struct {
	// Kind is the classification of a key of this form.
	Kind Kind
	// Form is the key without prefix as the documentation writes it, with
	// placeholders: "<key>.<name>", "also.<name>", "also-section.<name>", "status".
	Form string
	// Grammar is the value grammar in words, for the documentation.
	Grammar string
	// Checks are the check ids that judge the key (spec 01 §2, §4–6); none
	// judge the revision stamp.
	Checks []string
	// Doc is the one-line user documentation.
	Doc string
}

// OtherKeys returns the recognised keys outside the registry, in the order
// the documentation lists them. The slice is shared: never modify it.
func OtherKeys() []OtherKey { return otherKeys }

var otherKeys = []OtherKey{
	{Kind: KindRendered, Form: "<key>.<name>", Grammar: "as the base key",
		Checks: []string{"render.name"},
		Doc:    "the key for named render `<name>`; a named render reads only its own suffixed keys"},
	{Kind: KindAlso, Form: alsoName + ".<name>",
		Grammar: "absolute file path in the directory of `" + Prefix + "path`",
		Checks:  []string{"also.path", "path.reserved", "also.directory", "output.duplicate"},
		Doc:     "an extra rendering of the default document, written there by the default render's agents"},
	{Kind: KindAlsoSection, Form: alsoSectionName + ".<name>", Grammar: "section key",
		Checks: []string{"also-section.orphan"},
		Doc:    "the section rendered to `" + Prefix + alsoName + ".<name>` (default: the whole document); needs `" + alsoName + ".<name>`"},
	{Kind: KindStatus, Form: statusName, Grammar: "`injected`, written by the injection",
		Checks: []string{"status.no-agent", "status.value"},
		Doc:    "marks an injected pod so that admitting it again changes nothing; not a pod's to set"},
	{Kind: KindRevisionStamp, Form: revisionName, Grammar: "12 hex digits, written by the injection",
		Doc: "the first 12 hex digits of the revision of the installation that injected the pod (spec 10 §8), written beside `" +
			Prefix + statusName + "`; never judged, and replaced when a pod that carries it is injected"},
}
