// Package docs generates the user documentation of the annotation contract
// from the one annotation registry (decider/core/registry), so the documented keys
// can never drift from the keys the decider parses. The hand-written prose
// lives in annotations.md.tmpl; everything about the keys comes from
// registry.Rows() and registry.OtherKeys().
package docs

//go:generate go run ../cmd/docgen -out annotations.md

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

//go:embed annotations.md.tmpl
var annotationsTemplate string

var annotationsPage = template.Must(template.New("annotations.md").Parse(annotationsTemplate))

// page is what the template sees.
type page struct {
	Prefix    string
	Keys      int
	PerRender int
	KeyTable  string
	OtherKeys string
}

// Annotations is docs/annotations.md as generated from the registry.
func Annotations() ([]byte, error) { return Render(registry.Rows(), registry.OtherKeys()) }

// Render generates the annotation documentation for the registry rows and the
// other recognised keys, in their order. It refuses a key that lacks
// documentation, naming every such key.
func Render(rows []registry.Row, others []registry.OtherKey) ([]byte, error) {
	if err := checkDocumented(rows, others); err != nil {
		return nil, err
	}
	p := page{
		Prefix:    registry.Prefix,
		Keys:      len(rows),
		PerRender: len(perRenderNames(rows)),
		KeyTable:  keyTable(rows),
		OtherKeys: otherKeyTable(rows, others),
	}
	var b bytes.Buffer
	if err := annotationsPage.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("render annotations.md: %w", err)
	}
	return b.Bytes(), nil
}

// checkDocumented reports every row without a doc line, value grammar,
// built-in default text or scope, and every other key without a doc line or
// value grammar.
func checkDocumented(rows []registry.Row, others []registry.OtherKey) error {
	var lacking []string
	for i := range rows {
		r := &rows[i]
		if r.Doc == "" || r.GrammarText == "" || r.BuiltInDoc == "" || r.Scope == 0 {
			lacking = append(lacking, strconv.Quote(r.Name))
		}
	}
	var lackingOthers []string
	for i := range others {
		if o := &others[i]; o.Doc == "" || o.Grammar == "" {
			lackingOthers = append(lackingOthers, strconv.Quote(o.Form))
		}
	}
	var problems []string
	if len(lacking) > 0 {
		problems = append(problems, "registry rows without documentation (doc, grammar, built-in default and scope are all required): "+
			strings.Join(lacking, ", "))
	}
	if len(lackingOthers) > 0 {
		problems = append(problems, "other keys without documentation (doc and grammar are required): "+
			strings.Join(lackingOthers, ", "))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// keyTable is the Markdown table of the registry keys, one row per key in
// registry order.
func keyTable(rows []registry.Row) string {
	var b strings.Builder
	b.WriteString("| # | key | per-render | tiers | built-in default | scope | value | checks | meaning |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i := range rows {
		r := &rows[i]
		perRender := ""
		if r.PerRender {
			perRender = "yes"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			i+1, keyCell(r.Name), perRender, cell(r.TierText()), builtInCell(r), cell(r.ScopeText()),
			cell(r.GrammarText), checksCell(r.Checks), cell(meaning(r)))
	}
	return b.String()
}

// otherKeyTable is the Markdown table of the keys outside the registry that
// the decider still recognises (spec 01 §1.1, §4–6), in their order. The
// named-render form lists the per-render keys of rows.
func otherKeyTable(rows []registry.Row, others []registry.OtherKey) string {
	var b strings.Builder
	b.WriteString("| key | value | checks | meaning |\n")
	b.WriteString("|---|---|---|---|\n")
	for i := range others {
		o := &others[i]
		doc := o.Doc
		if o.Kind == registry.KindRendered {
			doc += ". Per-render keys: " + codeList(perRenderNames(rows))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", keyCell(o.Form), cell(o.Grammar), checksCell(o.Checks), cell(doc))
	}
	return b.String()
}

// codeList writes names as a comma-separated list of code spans.
func codeList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}

// perRenderNames are the per-render keys in registry order.
func perRenderNames(rows []registry.Row) []string {
	var names []string
	for i := range rows {
		if rows[i].PerRender {
			names = append(names, rows[i].Name)
		}
	}
	return names
}

// keyCell is the table cell naming a key: the full key as code.
func keyCell(name string) string { return "`" + registry.Prefix + name + "`" }

// builtInCell shows a literal built-in value as code and a description as text.
func builtInCell(r *registry.Row) string {
	if r.BuiltIn != "" && r.BuiltIn == r.BuiltInDoc {
		return "`" + r.BuiltIn + "`"
	}
	return cell(r.BuiltInDoc)
}

// checksCell lists the check ids that judge a key's value.
func checksCell(checks []string) string {
	if len(checks) == 0 {
		return "—"
	}
	return "`" + strings.Join(checks, "`, `") + "`"
}

// meaning is the doc line, with the deprecation when the key has one.
func meaning(r *registry.Row) string {
	if !r.Deprecated() {
		return r.Doc
	}
	if r.Replacement != "" {
		return r.Doc + " (deprecated since " + r.DeprecatedSince + "; use " + registry.Prefix + r.Replacement + ")"
	}
	return r.Doc + " (deprecated since " + r.DeprecatedSince + "; no replacement)"
}

// cell is a plain-text table cell; "" reads as "—". A pipe is escaped and a
// newline flattened everywhere so the text stays in its column; outside code
// spans (`...`) angle-bracket placeholders such as <secret-name> are escaped
// so they are not read as HTML, while inside a code span they are shown as
// written.
func cell(s string) string {
	if s == "" {
		return "—"
	}
	var b strings.Builder
	inCode := false
	for _, part := range strings.SplitAfter(s, "`") {
		if inCode {
			b.WriteString(codeEscaper.Replace(part))
		} else {
			b.WriteString(textEscaper.Replace(part))
		}
		if strings.HasSuffix(part, "`") {
			inCode = !inCode
		}
	}
	return b.String()
}

var (
	textEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ")
	codeEscaper = strings.NewReplacer("|", `\|`, "\n", " ")
)
