package devserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiHealthPath answers 200 once the UI server listens.
const uiHealthPath = "/healthz"

// uiProbeInterval paces the wait for the UI server to listen.
const uiProbeInterval = 50 * time.Millisecond

// newUIServer builds the Temporal UI with its embedded assets, pointed at the
// frontend, for local use: no auth, cookies allowed over plain HTTP, and no
// news fetched from the internet.
func newUIServer(opt Options, frontendAddress string) *uiserver.Server {
	return uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                opt.Host,
		Port:                opt.UIPort,
		TemporalGRPCAddress: frontendAddress,
		EnableUI:            true,
		DefaultNamespace:    opt.Namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
}

// startUI runs the UI server in the background and waits until it answers.
// The UI server's Start blocks for its whole life, so it runs in a goroutine.
func startUI(ctx context.Context, ui *uiserver.Server, baseURL string) error {
	errc := make(chan error, 1)
	go func() { errc <- ui.Start() }()
	for {
		if uiHealthy(ctx, baseURL) {
			return nil
		}
		select {
		case err := <-errc:
			return fmt.Errorf("devserver: UI server stopped while starting: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("devserver: wait for UI at %s: %w", baseURL, ctx.Err())
		case <-time.After(uiProbeInterval):
		}
	}
}

func uiHealthy(ctx context.Context, baseURL string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+uiHealthPath, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
