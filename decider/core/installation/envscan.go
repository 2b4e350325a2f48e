package installation

import (
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
)

// environment is the process environment as the loader sees it.
type environment struct {
	values map[string]string
	names  []string             // sorted
	decode envpolicy.DecodeText // decodes a variable's text holding a document
}

// newEnvironment reads KEY=value lines; the first occurrence of a name wins,
// as os.Getenv reads it.
func newEnvironment(environ []string, decode envpolicy.DecodeText) environment {
	e := environment{values: map[string]string{}, decode: decode}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := e.values[k]; dup {
			continue
		}
		e.values[k] = v
		e.names = append(e.names, k)
	}
	sort.Strings(e.names)
	return e
}

// lookup returns a variable's value and whether it is set at all.
func (e environment) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

var knownNamesList = strings.Join(Variables(), ", ")

// scanEnvironment is the process environment scan of spec 02 §7.2: every
// DYNAMIC_CONFIG_AGENT_* / DYNAMIC_CONFIG_WEBHOOK_* name must be known.
func scanEnvironment(e environment) []string {
	known := map[string]bool{}
	for _, v := range Variables() {
		known[v] = true
	}
	for _, v := range frontdoorVariables {
		known[v] = true
	}
	var problems []string
	for _, name := range e.names {
		if !strings.HasPrefix(name, "DYNAMIC_CONFIG_AGENT_") && !strings.HasPrefix(name, "DYNAMIC_CONFIG_WEBHOOK_") {
			continue
		}
		if known[name] {
			continue
		}
		value := e.values[name]
		if slices.Contains(selfRotateVariables, name) {
			if trim(value) != "" {
				problems = append(problems, name+": selfRotate TLS belongs to the front door (tls.mode: selfRotate, frontdoor --self-rotate); it is not an installation setting")
			}
			continue
		}
		if ServiceLink(name, value) {
			continue
		}
		if k := storeShapedVariable(name); k != "" {
			problems = append(problems, name+": "+strconv.Quote(name)+" is not an installation setting; "+k+" is a per-store knob — set it in DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (agent.defaults.perStore)")
			continue
		}
		problems = append(problems, name+": "+strconv.Quote(name)+" is not an installation setting; the ones there are: "+knownNamesList)
	}
	return problems
}

// storeShapedVariable returns the knob when name is the fleet-variable
// spelling of a store-shaped knob (DYNAMIC_CONFIG_AGENT_ENDPOINT, …).
func storeShapedVariable(name string) string {
	rest, ok := strings.CutPrefix(name, "DYNAMIC_CONFIG_AGENT_")
	if !ok {
		return ""
	}
	for _, k := range StoreShapedKnobs {
		if strings.ToUpper(strings.ReplaceAll(k, "-", "_")) == rest {
			return k
		}
	}
	return ""
}

var (
	linkServiceHost = regexp.MustCompile(`^[A-Z0-9_]+_SERVICE_HOST$`)
	linkServicePort = regexp.MustCompile(`^[A-Z0-9_]+_SERVICE_PORT(_[A-Z0-9_]+)?$`)
	linkPort        = regexp.MustCompile(`^[A-Z0-9_]+_PORT$`)
	linkPortProto   = regexp.MustCompile(`^[A-Z0-9_]+_PORT_[0-9]+_(TCP|UDP|SCTP)$`)
	linkPortField   = regexp.MustCompile(`^[A-Z0-9_]+_PORT_[0-9]+_(TCP|UDP|SCTP)_(PROTO|PORT|ADDR)$`)
	linkURL         = regexp.MustCompile(`^(tcp|udp|sctp)://(.+)$`)
)

// ServiceLink reports whether name=value is a Kubernetes service-link
// variable: the name has the kubelet's shape AND so does the value (spec 02
// §7.2). Such variables are ignored by the environment scan.
func ServiceLink(name, value string) bool {
	// A name may fit more than one pattern (a Service named "x-service"
	// yields X_SERVICE_PORT as its <SERVICE>_PORT): any fitting pattern whose
	// value shape also fits makes it a link.
	if linkPortField.MatchString(name) {
		switch name[strings.LastIndexByte(name, '_')+1:] {
		case "PROTO":
			if value == "tcp" || value == "udp" || value == "sctp" {
				return true
			}
		case "PORT":
			if isPort(value) {
				return true
			}
		default:
			if isIP(value) {
				return true
			}
		}
	}
	if (linkPortProto.MatchString(name) || linkPort.MatchString(name)) && isLinkURL(value) {
		return true
	}
	if linkServiceHost.MatchString(name) && isIP(value) {
		return true
	}
	return linkServicePort.MatchString(name) && isPort(value)
}

func isIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(s)
	return err == nil && n <= 65535
}

func isLinkURL(s string) bool {
	m := linkURL.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(m[2])
	if err != nil || ap.Addr().Zone() != "" {
		return false
	}
	return isPort(m[2][strings.LastIndexByte(m[2], ':')+1:])
}
