package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// The app's log lines the test reads (test/e2e/node): the first read says
// whether the rendered file was there when the app started; each document
// line carries the time the app saw it (Unix milliseconds) and the document
// on one line.
const (
	firstReadFound   = "app: first read: found"
	firstReadMissing = "app: first read: missing"
	documentPrefix   = "app: document "
)

// runApp reads PATH as an application reads its configuration: `app once
// PATH` waits for it, logs it and exits 0 (a Job's main container); `app
// watch PATH` logs it and every change of it until SIGTERM (a Deployment's).
func runApp(args []string) error {
	if len(args) != 2 || (args[0] != "once" && args[0] != "watch") {
		return errors.New("usage: standin app once|watch PATH")
	}
	mode, path := args[0], args[1]
	log.SetFlags(0)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var last string
	for first := true; ; first = false {
		doc, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if first {
				log.Print(firstReadMissing)
			}
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		default:
			if first {
				log.Print(firstReadFound)
			}
			if text := strings.ReplaceAll(strings.TrimSpace(string(doc)), "\n", " "); text != last {
				last = text
				log.Printf("%s%d %s", documentPrefix, time.Now().UnixMilli(), text)
				if mode == "once" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}
