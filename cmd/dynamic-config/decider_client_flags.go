package main

import (
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// deciderClientFlags are the connection flags of a gRPC client of a
// decider, declared once for its three users: the front door and
// fleet-status (--decider-*, DYNAMIC_CONFIG_DECIDER_*) and a follower
// (--leader-*, DYNAMIC_CONFIG_DECIDER_LEADER_*, spec 09 §1).
type deciderClientFlags struct {
	plaintext  bool
	ca         string
	clientCert string
	clientKey  string
	serverName string
	tokenFile  string
}

// register declares <flag>-plaintext, -ca, -client-cert, -client-key,
// -server-name and -token-file, with <env>PLAINTEXT … <env>TOKEN_FILE.
// peer names the other end in the help, serverNameDefault what an empty
// --<flag>-server-name verifies.
func (c *deciderClientFlags) register(fs *flagSet, flag, env, peer, serverNameDefault string) {
	fs.boolVar(&c.plaintext, flag+"-plaintext", env+"PLAINTEXT", false, "plaintext gRPC to "+peer+" (loopback/tests)")
	fs.stringVar(&c.ca, flag+"-ca", env+"CA", "", "CA to verify "+peer+" (empty = system roots)")
	fs.stringVar(&c.clientCert, flag+"-client-cert", env+"CLIENT_CERT", "", "client certificate for mTLS to "+peer)
	fs.stringVar(&c.clientKey, flag+"-client-key", env+"CLIENT_KEY", "", "client key for mTLS to "+peer)
	fs.stringVar(&c.serverName, flag+"-server-name", env+"SERVER_NAME", "", "TLS server name to verify (default: "+serverNameDefault+")")
	fs.stringVar(&c.tokenFile, flag+"-token-file", env+"TOKEN_FILE", "", "bearer token to send to "+peer+" (re-read on change)")
}

// config is the client configuration of target over these flags; the
// caller adds what is its own (message budget, waiting for files).
func (c *deciderClientFlags) config(target string) client.Config {
	return client.Config{
		Target:         target,
		Plaintext:      c.plaintext,
		CAFile:         c.ca,
		ClientCertFile: c.clientCert,
		ClientKeyFile:  c.clientKey,
		ServerName:     c.serverName,
		TokenFile:      c.tokenFile,
	}
}

// budgeted is config with the message budget of maxRequestBytes
// (--max-request-bytes), the one both ends of the hop hold to.
func (c *deciderClientFlags) budgeted(target string, maxRequestBytes int64) client.Config {
	cfg := c.config(target)
	cfg.MaxMessageBytes = msgbudget.Bytes(maxRequestBytes)
	return cfg
}
