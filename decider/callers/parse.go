package callers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// Options are what the file is checked against beyond its own content.
type Options struct {
	// ClientCertificates says the decider verifies client certificates
	// (--tls-client-ca); without it a certificate identity can never match.
	ClientCertificates bool
	// Settle is how long a changed file must stay the same before it is
	// put in force (0: stablefile.DefaultSettle).
	Settle time.Duration
}

// Problems is a callers file that does not validate: every problem, in
// file order.
type Problems struct {
	Source string
	List   []string
}

func (p *Problems) Error() string {
	return fmt.Sprintf("callers file %s has %d problem(s):\n  %s", p.Source, len(p.List), strings.Join(p.List, "\n  "))
}

// CheckFlags checks the decider's --cluster-name (cluster) and its pairing
// with --callers (file) and --auth-token-file (tokenFile).
func CheckFlags(cluster, file, tokenFile string) error {
	if problem := CheckClusterName(cluster); problem != "" {
		return errors.New("--cluster-name is " + problem)
	}
	if file == "" {
		return nil
	}
	if tokenFile != "" {
		return errors.New("--callers and --auth-token-file exclude each other; list the token's SHA-256 in the callers file as a caller's tokenSHA256")
	}
	if cluster == "" {
		return errors.New("--callers needs --cluster-name: the decider's own cluster, which a request naming no cluster is decided for and checked against")
	}
	return nil
}

// CheckClusterName says what is wrong with a cluster name ("" = nothing): a
// lower-case DNS subdomain of at most 253 characters, as Kubernetes object
// names are. The empty name is valid: it means the decider's own cluster.
func CheckClusterName(name string) string {
	if name == "" {
		return ""
	}
	if !dnsname.IsSubdomain(name) {
		return fmt.Sprintf("%s is not a cluster name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters", redact.QuoteCut(name))
	}
	return ""
}

// checkCallerName says what is wrong with a caller name ("" = nothing).
func checkCallerName(name string) string {
	if !dnsname.IsLabel(name) {
		return fmt.Sprintf("%s is not a caller name: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters", redact.QuoteCut(name))
	}
	return ""
}

// Parse validates a callers file. source names it in the problems. An
// invalid file is a *Problems listing every problem found.
func Parse(data []byte, source string, opts Options) (*Set, error) {
	if len(data) > MaxFileBytes {
		return nil, &Problems{Source: source, List: []string{sizeProblem(int64(len(data)))}}
	}
	p := &parser{source: source, opts: opts, set: &Set{}, seen: map[[sha256.Size]byte]string{}, names: map[string]int{}}
	p.parse(data)
	if len(p.problems) > 0 {
		sort.SliceStable(p.problems, func(i, j int) bool { return p.problems[i].line < p.problems[j].line })
		list := make([]string, len(p.problems))
		for i, pr := range p.problems {
			list[i] = pr.text
		}
		return nil, &Problems{Source: source, List: list}
	}
	return p.set, nil
}

type parser struct {
	source   string
	opts     Options
	set      *Set
	problems []problem
	seen     map[[sha256.Size]byte]string // credential digest → where it was first listed
	names    map[string]int               // caller name → line first listed
}

// problem is one problem and the line it is on (0 = the whole file).
type problem struct {
	line int
	text string
}

func (p *parser) add(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.problems = append(p.problems, problem{line, fmt.Sprintf("line %d: %s: %s", line, path, fmt.Sprintf(format, args...))})
}

// keyText is a map key as a path shows it, cut to the message limit.
func keyText(k *yaml.Node) string { return textcut.Runes(k.Value, textcut.MessageLimit) }

func (p *parser) parse(data []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.problems = append(p.problems, problem{0, "not YAML: " + err.Error()})
		return
	}
	if len(doc.Content) == 0 {
		p.problems = append(p.problems, problem{0, "the file is empty; it needs a callers: list"})
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.add(root, "(top)", "the file is a map with one key, callers")
		return
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value == "callers" {
			list = v
			continue
		}
		p.add(k, keyText(k), "unknown key; the only key is callers")
	}
	if list == nil {
		p.add(root, "callers", "missing; list the callers")
		return
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		p.add(list, "callers", "a non-empty list of callers (name, clusters, credentials)")
		return
	}
	if n := len(list.Content); n > MaxCallers {
		p.add(list, "callers", "%d callers, above the limit of %d", n, MaxCallers)
		return
	}
	for i, item := range list.Content {
		p.caller(fmt.Sprintf("callers[%d]", i), item)
		runtime.Gosched() // a reload shares the CPU with the decisions; it is never in a hurry
	}
}

func (p *parser) caller(path string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.add(n, path, "a caller is a map with name, clusters and credentials")
		return
	}
	c := &Caller{}
	index := len(p.set.callers)
	var name, clusters, creds *yaml.Node
	var unknown []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			name = v
		case "clusters":
			clusters = v
		case "credentials":
			creds = v
		default:
			unknown = append(unknown, k)
		}
	}
	switch {
	case name == nil:
		p.add(n, path+".name", "missing")
	case name.Kind != yaml.ScalarNode:
		p.add(name, path+".name", "a string")
	case checkCallerName(name.Value) != "":
		p.add(name, path+".name", "%s", checkCallerName(name.Value))
	default:
		c.Name = name.Value
		if first, dup := p.names[c.Name]; dup {
			p.add(name, path+".name", "%q is already the name of the caller on line %d; names are unique", c.Name, first)
		} else {
			p.names[c.Name] = name.Line
		}
		path = path + " (" + c.Name + ")"
	}
	for _, k := range unknown {
		p.add(k, path+"."+keyText(k), "unknown key; accepted: name, clusters, credentials")
	}

	if clusters == nil {
		p.add(n, path+".clusters", "missing; list the clusters this caller may speak for")
	} else if clusters.Kind != yaml.SequenceNode || len(clusters.Content) == 0 {
		p.add(clusters, path+".clusters", "a non-empty list of cluster names")
	} else if n := len(clusters.Content); n > MaxClustersPerCaller {
		p.add(clusters, path+".clusters", "%d clusters, above the limit of %d per caller", n, MaxClustersPerCaller)
	} else {
		listed := make(map[string]struct{}, n)
		for j, cl := range clusters.Content {
			where := func() string { return fmt.Sprintf("%s.clusters[%d]", path, j) } // only for a problem
			if cl.Kind != yaml.ScalarNode || cl.Value == "" {
				p.add(cl, where(), "a cluster name")
				continue
			}
			if problem := CheckClusterName(cl.Value); problem != "" {
				p.add(cl, where(), "%s", problem)
				continue
			}
			if _, twice := listed[cl.Value]; twice {
				p.add(cl, where(), "%s is listed twice", redact.QuoteCut(cl.Value))
				continue
			}
			listed[cl.Value] = struct{}{}
			c.Clusters = append(c.Clusters, cl.Value)
			c.clusterDigests = append(c.clusterDigests, sha256.Sum256([]byte(cl.Value)))
		}
	}

	if creds == nil {
		p.add(n, path+".credentials", "missing; list at least one credential (tokenSHA256, uriSAN or dnsSAN)")
	} else if creds.Kind != yaml.SequenceNode || len(creds.Content) == 0 {
		p.add(creds, path+".credentials", "a non-empty list of credentials, each one of tokenSHA256, uriSAN or dnsSAN")
	} else {
		for j, cr := range creds.Content {
			p.credential(fmt.Sprintf("%s.credentials[%d]", path, j), cr, index)
		}
	}
	p.set.callers = append(p.set.callers, c)
}

func (p *parser) credential(path string, n *yaml.Node, caller int) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		p.add(n, path, "a credential is a map with exactly one of tokenSHA256, uriSAN or dnsSAN")
		return
	}
	k, v := n.Content[0], n.Content[1]
	where := path + "." + keyText(k)
	if v.Kind != yaml.ScalarNode || v.Value == "" {
		p.add(v, where, "a non-empty string")
		return
	}
	value := v.Value
	var digest [sha256.Size]byte
	switch k.Value {
	case KindTokenSHA256:
		raw, err := hex.DecodeString(value)
		if err != nil || len(raw) != sha256.Size {
			p.add(v, where, "64 hexadecimal digits, the SHA-256 of the token (sha256sum of the token without its newline); never the token itself")
			return
		}
		copy(digest[:], raw)
		if digest == sha256.Sum256(nil) {
			p.add(v, where, "this is the SHA-256 of the empty token; hash the token itself")
			return
		}
	case KindURISAN:
		u, err := url.Parse(value)
		if err != nil || u.Scheme == "" || strings.ContainsAny(value, " \t\n") {
			p.add(v, where, "a URI with a scheme, e.g. spiffe://west.example/ns/dynamic-config/sa/frontdoor")
			return
		}
		digest = sanDigest(KindURISAN, value)
	case KindDNSSAN:
		if CheckClusterName(value) != "" {
			// The value is an identity of a credential: never quoted (issue 23).
			p.add(v, where, "%s is not a DNS name: lower-case letters, digits, '-' and '.', at most 253 characters", redact.Withheld(value))
			return
		}
		digest = sanDigest(KindDNSSAN, value)
	default:
		p.add(k, where, "unknown credential kind; accepted: tokenSHA256, uriSAN, dnsSAN")
		return
	}
	if k.Value != KindTokenSHA256 {
		if !p.opts.ClientCertificates {
			p.add(v, where, "the decider does not verify client certificates (no --tls-client-ca), so this identity can never be presented; set --tls-client-ca or use tokenSHA256")
			return
		}
		p.set.certs = true
	}
	if first, dup := p.seen[digest]; dup {
		p.add(v, where, "the same credential is already listed at %s; a credential identifies one caller", first)
		return
	}
	p.seen[digest] = fmt.Sprintf("line %d", v.Line)
	p.set.credentials = append(p.set.credentials, credential{kind: k.Value, digest: digest, caller: caller})
	if k.Value == KindTokenSHA256 {
		if p.set.tokens == nil {
			p.set.tokens = map[[sha256.Size]byte]struct{}{}
		}
		p.set.tokens[tokenKey(digest)] = struct{}{}
	}
}
