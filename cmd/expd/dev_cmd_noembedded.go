//go:build noembedded

package main

import (
	"context"
	"errors"
)

// A production build (-tags noembedded) has no embedded Temporal server:
// `expd dev` says so instead of starting.
func init() { commands["dev"] = runDevUnavailable }

func runDevUnavailable(context.Context, Config, []string) error {
	return errors.New("this binary was built with -tags noembedded and has no embedded Temporal server; use a build without the tag for expd dev, or run expd api and expd worker against a Temporal cluster")
}
