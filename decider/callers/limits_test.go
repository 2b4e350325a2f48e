package callers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestACallersFileAboveALimitIsRefusedWithTheNumberAndTheLimit(t *testing.T) {
	oneCaller := func(clusters int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "callers:\n  - name: a\n    credentials: [{tokenSHA256: %s}]\n    clusters:\n", digestOf("t"))
		for j := range clusters {
			fmt.Fprintf(&b, "      - c%d\n", j)
		}
		return b.String()
	}
	tests := []struct {
		name string
		data []byte
		want string // "" = accepted
	}{
		{"a file above 4 MiB", append([]byte("callers:\n#"), make([]byte, MaxFileBytes)...),
			fmt.Sprintf("the file is %d bytes, above the limit of 4194304 bytes (4 MiB)", MaxFileBytes+10)},
		{"more callers than the limit", bigFile(MaxCallers+1, 1), "line 2: callers: 10001 callers, above the limit of 10000"},
		{"more clusters for one caller than the limit", []byte(oneCaller(MaxClustersPerCaller + 1)),
			"line 5: callers[0] (a).clusters: 1001 clusters, above the limit of 1000 per caller"},
		{"a caller at the cluster limit", []byte(oneCaller(MaxClustersPerCaller)), ""},
		{"the caller limit", bigFile(MaxCallers, 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.data, "callers.yaml", Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var problems *Problems
			if !errors.As(err, &problems) || len(problems.List) != 1 || !strings.HasPrefix(problems.List[0], tt.want) {
				t.Errorf("err = %v, want one problem starting %q", err, tt.want)
			}
		})
	}
}

func TestACallersProblemNeverQuotesADNSSANValue(t *testing.T) {
	const pasted = "Bearer_s3cr3t-token-pasted-here"
	_, err := Parse([]byte("callers:\n  - name: a\n    clusters: [x]\n    credentials: [{dnsSAN: "+pasted+"}]\n"), "f", Options{ClientCertificates: true})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("err = %v; want a problem without the value", err)
	}
	if want := "callers[0] (a).credentials[0].dnsSAN: <withheld, 31 characters> is not a DNS name"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v; want %q", err, want)
	}
}

func TestAValueQuotedInACallersProblemIsCutToTheMessageLimit(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	_, err := Parse([]byte("callers:\n  - name: a\n    clusters: [\"X"+long+"\"]\n    credentials: [{tokenSHA256: "+digestOf("t")+"}]\n"), "f", Options{})
	if err == nil || !strings.Contains(err.Error(), "is not a cluster name") || len(err.Error()) > 1000 {
		t.Errorf("a problem of %d bytes; want the values cut to the message limit", len(err.Error()))
	}
}
