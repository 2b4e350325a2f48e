// Package loopback runs the cluster's path on loopback for tests and
// benchmarks: the decider (decider/daemon) on TCP gRPC and the front door
// (frontdoor/daemon) on HTTPS with a generated pair, dialing it with its
// gRPC client — the two daemons side by side, started as serve starts
// them, with the production logger and metrics, so that benchmarks measure
// what a cluster runs. The decider holds the installation and the class
// set a test puts in force (Use), never a file.
package loopback

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// Cluster is a decider and a front door in front of it, on loopback.
type Cluster struct {
	Decider   *deciderd.Decider
	Frontdoor *frontdoord.Frontdoor
	// URL is the front door's https://host:port.
	URL string
	// Client trusts the front door's pair and speaks HTTP/1.1, as the API
	// server does.
	Client *http.Client
}

// Start starts the cluster with the empty installation and classes off,
// both logging JSON at info to io.Discard; the test's end stops it.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	return StartLogging(tb, slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

// StartLogging is Start with both daemons logging to logger.
func StartLogging(tb testing.TB, logger *slog.Logger) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation: deciderd.Installation{Given: installation.Empty()},
		Addr:         "127.0.0.1:0",
		// a class store from the start, so that Use can turn classes on and off
		Classes: deciderd.Classes{Set: classes.NewSet(nil)},
		Logger:  logger,
	})
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	d.Classes().TurnOff()
	bundle, err := certstest.Write(tb.TempDir(), "tls", time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	fd, err := frontdoord.Start(ctx, frontdoord.Config{
		Addr:    "127.0.0.1:0",
		TLS:     frontdoord.TLS{CertFile: bundle.CertFile, KeyFile: bundle.KeyFile},
		Decider: client.Config{Target: d.Addr().String(), Plaintext: true},
		// The decider's path on every admission: the corpus tests put case
		// after case in force (Use) and compare every answer with its golden
		// review, and the benchmarks measure the hop. The decision cache's
		// own proofs are frontdoor/decisioncache's and doors/engine's.
		DecisionCache: frontdoord.DecisionCache{Off: true},
		Logger:        logger,
	})
	if err != nil {
		cancel()
		d.Shutdown(time.Second)
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cancel()
		<-fd.Done()
		d.Shutdown(time.Second)
	})
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: bundle.Pool(), MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 64,
	}
	tb.Cleanup(transport.CloseIdleConnections)
	return &Cluster{Decider: d, Frontdoor: fd, URL: fd.URL(), Client: &http.Client{Timeout: 10 * time.Second, Transport: transport}}
}

// Use puts inst in force at the decider, with the class set cls (nil:
// classes off).
func (c *Cluster) Use(inst *installation.Installation, cls *classes.Set) {
	c.Decider.Store().Swap(inst)
	if cls != nil {
		c.Decider.Classes().Swap(cls)
	} else {
		c.Decider.Classes().TurnOff()
	}
}

// Door posts a review to path over HTTPS (an engine.Door: the decision
// behind the answer is not known here).
func (c *Cluster) Door(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
	data, err := c.Post(path, body, nil)
	if err != nil {
		return nil, nil, err
	}
	answer, err := review.DecodeAnswer(data)
	return answer, nil, err
}

// Post sends one review to path and returns the answer without its
// trailing white space, read into buf (a fresh buffer when nil). An answer
// other than 200, or over another protocol than HTTP/1.1, is an error.
func (c *Cluster) Post(path string, body []byte, buf *bytes.Buffer) ([]byte, error) {
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	resp, err := c.Client.Post(c.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, buf.Bytes())
	}
	if resp.ProtoMajor != 1 {
		return nil, fmt.Errorf("the front door spoke %s, want HTTP/1.1", resp.Proto)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
