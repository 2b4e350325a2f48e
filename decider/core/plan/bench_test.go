package plan

import "testing"

func BenchmarkBuild(b *testing.B) {
	named := []Render{
		{Name: "a", Values: values(map[string]string{"source": "redis", "key": "k", "path": "/config/a.json", "endpoint-secret": "r/url", "metrics-port": "9111"})},
		{Name: "b", Values: values(map[string]string{"source": "vault", "key": "k", "path": "/config/b.json", "endpoint": "https://v:8200", "ca-configmap": "ca"})},
		{Name: "c", Values: values(map[string]string{"source": "git", "key": "k", "path": "/config/c.json", "endpoint": "https://g", "ssh-secret": "key"})},
	}
	cases := []struct {
		name string
		in   *Input
	}{
		{"minimal consul", input(consul())},
		{"vault with CA", input(with(consul(), map[string]string{"source": "vault", "auth": "kubernetes", "auth-role": "app", "ca-configmap": "vault-ca"}))},
		{"three named renders, both mode", input(with(consul(), map[string]string{"mode": "both", "metrics-port": "9110"}), named...)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Build(c.in)
				_ = Warnings(c.in)
			}
		})
	}
}
