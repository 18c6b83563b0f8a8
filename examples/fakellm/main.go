// Command fakellm serves the fake OpenAI-compatible models of package
// internal/fakellm (its comment has the model table: latencies, tokens,
// errors), for the quick start (docs/quickstart.md) and local trials:
//
//	go run ./examples/fakellm [--addr 127.0.0.1:8070] [--key KEY] [--url-file FILE]
//
// It prints its base URL (…/v1, what OpenAI clients take as baseURL) once
// it listens, and writes it to --url-file too, so a script can wait for it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/expd/expd/internal/fakellm"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("fakellm: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8070", "listen address (port 0: a free port)")
	key := flag.String("key", "", "the API key to accept as Bearer; empty accepts any")
	urlFile := flag.String("url-file", "", "also write the base URL to this file once listening")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	if *urlFile != "" {
		// Written whole by a rename, so a reader never sees half a URL.
		tmp := *urlFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(base+"\n"), 0o644); err != nil {
			return fmt.Errorf("url file: %w", err)
		}
		if err := os.Rename(tmp, *urlFile); err != nil {
			return fmt.Errorf("url file: %w", err)
		}
	}
	fmt.Println(base)

	srv := &http.Server{Handler: fakellm.NewHandler(*key), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
