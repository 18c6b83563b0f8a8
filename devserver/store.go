package devserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"

	"github.com/expd/expd/workflows"
)

// namespaceRetention is how long closed workflows stay visible in the namespace
// Start registers: a week is enough to inspect recent nightly runs in the UI.
const namespaceRetention = 7 * 24 * time.Hour

// sqlConfig points Temporal's SQLite plugin at the database file.
func sqlConfig(path string) *config.SQL {
	return &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      path,
		ConnectAttributes: map[string]string{"mode": "rwc"},
	}
}

// prepareStore sets up the schema when the database file does not exist yet
// and registers the namespace, with expd's search attributes, when missing.
// Both happen before the server starts, so the server loads the namespace
// fully formed and workflows can use the search attributes at once.
func prepareStore(sql *config.SQL, clusterName, namespace string) error {
	if err := setupSchemaIfMissing(sql); err != nil {
		return err
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, workflows.SearchAttributes())
	if err != nil {
		return fmt.Errorf("devserver: describe namespace %q: %w", namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(namespaceRetention)
	if err := sqliteschema.CreateNamespaces(sql, ns); err != nil {
		return fmt.Errorf("devserver: register namespace %q: %w", namespace, err)
	}
	return nil
}

func setupSchemaIfMissing(sql *config.SQL) error {
	_, err := os.Stat(sql.DatabaseName)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("devserver: inspect database file: %w", err)
	}
	if err := sqliteschema.SetupSchema(sql); err != nil {
		// A half-made schema would be taken as complete on the next start.
		_ = os.Remove(sql.DatabaseName)
		return fmt.Errorf("devserver: set up Temporal schema in %s: %w", sql.DatabaseName, err)
	}
	return nil
}
