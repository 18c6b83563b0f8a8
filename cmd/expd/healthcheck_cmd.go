package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// runHealthcheck is `expd healthcheck URL`: exit 0 when URL answers 200.
// Container images without curl use it for their health checks.
func runHealthcheck(ctx context.Context, _ Config, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: expd healthcheck http://host:port/readyz")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", args[0], resp.StatusCode)
	}
	return nil
}
