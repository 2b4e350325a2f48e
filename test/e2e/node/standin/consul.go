package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kvStore is the part of consul's KV HTTP API the stand-in agent reads and
// the test writes: GET (raw or as consul's JSON), PUT and DELETE of
// /v1/kv/<key>, each write raising the store's index.
type kvStore struct {
	mu     sync.Mutex
	index  uint64
	values map[string]kvEntry
}

type kvEntry struct {
	value       []byte
	modifyIndex uint64
}

func (s *kvStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, "/v1/kv/")
	if !ok || key == "" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("X-Consul-Index", strconv.FormatUint(s.index, 10))
	switch r.Method {
	case http.MethodGet:
		e, found := s.values[key]
		if !found {
			http.NotFound(w, r)
			return
		}
		if _, raw := r.URL.Query()["raw"]; raw {
			_, _ = w.Write(e.value)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode([]map[string]any{{
			"Key": key, "Value": base64.StdEncoding.EncodeToString(e.value),
			"CreateIndex": e.modifyIndex, "ModifyIndex": e.modifyIndex, "Flags": 0,
		}})
	case http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.index++
		s.values[key] = kvEntry{value: body, modifyIndex: s.index}
		log.Printf("consul: put %s (%d bytes, index %d)", key, len(body), s.index)
		_, _ = io.WriteString(w, "true")
	case http.MethodDelete:
		s.index++
		delete(s.values, key)
		log.Printf("consul: delete %s (index %d)", key, s.index)
		_, _ = io.WriteString(w, "true")
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// runConsul serves the KV API on --addr (consul's port, 8500) until SIGTERM.
func runConsul(args []string) error {
	fs := flag.NewFlagSet("consul", flag.ContinueOnError)
	addr := fs.String("addr", ":8500", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/kv/", &kvStore{values: map[string]kvEntry{}})
	mux.HandleFunc("/v1/status/leader", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `"127.0.0.1:8300"`)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("consul: serving the KV API on %s", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
