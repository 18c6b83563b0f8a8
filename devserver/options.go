package devserver

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// UIDisabled as Options.UIPort turns the Temporal UI off.
const UIDisabled = -1

// databaseFileName is the SQLite file holding Temporal's state inside the data dir.
const databaseFileName = "temporal.db"

// Options configures Start. Zero values pick the defaults documented per field.
type Options struct {
	DataDir      string // holds temporal.db; created if missing; required
	Host         string // listen address of the frontend, its HTTP API and the UI; default "127.0.0.1"
	FrontendPort int    // frontend gRPC port; 0 = a free port
	HTTPPort     int    // frontend HTTP API port; 0 = a free port
	UIPort       int    // Temporal UI port; 0 = a free port; UIDisabled (-1) = no UI
	Namespace    string // registered if missing; default "default"
	Logger       *slog.Logger

	// beforeBuild, when set (by tests), runs between the release of the
	// reserved Temporal ports and the build that binds them.
	beforeBuild func(serviceListeners)
}

// withDefaults fills in defaults and creates the data dir. Ports stay as
// given: Start reserves them (0: a free one) when it needs them.
func (o Options) withDefaults() (Options, error) {
	if o.DataDir == "" {
		return o, fmt.Errorf("devserver: DataDir is required")
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("devserver: resolve data dir %q: %w", o.DataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return o, fmt.Errorf("devserver: create data dir: %w", err)
	}
	o.DataDir = dataDir
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

func (o Options) databasePath() string {
	return filepath.Join(o.DataDir, databaseFileName)
}
