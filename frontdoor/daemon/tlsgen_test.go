package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateTLS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	gen, err := GenerateLoopbackTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(gen.Cert, gen.Key)
	if err != nil {
		t.Fatalf("the pair does not load: %v", err)
	}
	caPEM, err := os.ReadFile(gen.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost"} {
		t.Run("the serving certificate verifies for "+name, func(t *testing.T) {
			_, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots})
			if err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("the serving certificate does not verify for another host", func(t *testing.T) {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
			t.Error("verified for example.com")
		}
	})
	t.Run("the key is private to its owner", func(t *testing.T) {
		info, err := os.Stat(gen.Key)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("tls.key mode %v", info.Mode().Perm())
		}
	})
	for _, f := range []string{"ca.crt", "tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestServeListensOnLoopbackAddressesOnly(t *testing.T) {
	cases := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"[::1]:9090", true},
		{"localhost:8080", true},
		{"LOCALHOST:8080", true},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{":8080", false},
		{"10.0.0.1:9090", false},
		{"localhost.example.com:8080", false},
		{"127.0.0.1", false},
	}
	for _, c := range cases {
		name := c.addr + " is refused"
		if c.want {
			name = c.addr + " is a loopback address"
		}
		t.Run(name, func(t *testing.T) {
			if got := IsLoopbackAddr(c.addr); got != c.want {
				t.Errorf("IsLoopbackAddr(%q) = %v, want %v", c.addr, got, c.want)
			}
		})
	}
}
