package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// The floors run as child processes of the load tool (the tool re-executes
// itself with one of these words), so that their CPU is measured from /proc
// like the real servers' and never mixed with the load generator's.
const (
	childFloorWebhook = "floor-webhook"
	childGRPCFloor    = "grpc-floor"
)

// listeningPrefix starts the one line a floor child prints on stdout.
const listeningPrefix = "listening "

// floorWebhook is the admission floor: TLS, HTTP/1.1, keep-alive, the same
// listener timeouts as the front door; it decodes the whole AdmissionReview
// (the envelope and the object into generic JSON) and answers allowed. It is
// what any Go webhook pays before it does its own work.
func floorWebhook(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "floor-webhook: want CERT KEY")
		return 2
	}
	pair, err := tls.LoadX509KeyPair(args[0], args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor-webhook:", err)
		return 2
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor-webhook:", err)
		return 2
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 7<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := review.Decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var object map[string]any
		if err := json.Unmarshal(req.Object, &object); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(review.Encode(&review.Response{UID: req.UID, Allowed: true})) // a generator that went away has nothing to hear
	})
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		Protocols:         &protocols,
	}
	stopOnSignal(func() { srv.Close() })
	fmt.Println(listeningPrefix + lis.Addr().String())
	err = srv.Serve(tls.NewListener(lis, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}))
	if err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "floor-webhook:", err)
		return 1
	}
	return 0
}

// grpcFloor serves the standard health service in plaintext on loopback:
// Check is the no-op unary call the gRPC floor is measured with.
func grpcFloor([]string) int {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc-floor:", err)
		return 2
	}
	// The decider's transport settings (decider/server), so the floor is
	// what a hop costs the product on this machine.
	srv := grpc.NewServer(grpc.InitialWindowSize(1<<20), grpc.InitialConnWindowSize(1<<20),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	stopOnSignal(srv.Stop)
	fmt.Println(listeningPrefix + lis.Addr().String())
	if err := srv.Serve(lis); err != nil && err != grpc.ErrServerStopped {
		fmt.Fprintln(os.Stderr, "grpc-floor:", err)
		return 1
	}
	return 0
}

func stopOnSignal(stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		stop()
	}()
}
