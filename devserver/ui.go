package devserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"time"
	"unsafe"

	"github.com/labstack/echo/v4"

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
// news fetched from the internet. It serves on ln, closed when it stops.
func newUIServer(opt Options, frontendAddress string, ln net.Listener) (*uiserver.Server, error) {
	ui := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                opt.Host,
		Port:                opt.UIPort,
		TemporalGRPCAddress: frontendAddress,
		EnableUI:            true,
		DefaultNamespace:    opt.Namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	if err := handListener(ui, ln); err != nil {
		return nil, err
	}
	return ui, nil
}

// handListener makes the UI server serve on ln, which Start has held since
// it picked the port. The UI server would otherwise bind the port itself
// and, when another process took it meanwhile, exit this process (its echo
// logger's Fatal). It takes no listener, but its echo server serves on a
// preset Listener field; the field holding the echo server is unexported,
// hence the reflection. The UI test fails if a new ui-server version moves it.
func handListener(ui *uiserver.Server, ln net.Listener) error {
	field := reflect.ValueOf(ui).Elem().FieldByName("httpServer")
	if !field.IsValid() || field.Type() != reflect.TypeFor[*echo.Echo]() {
		return fmt.Errorf("devserver: the UI server (%T) has no echo server to hand its listener to", ui)
	}
	e := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface().(*echo.Echo)
	e.Listener = ln
	return nil
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
			return fmt.Errorf("devserver: UI server stopped while starting: %w", err)
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
