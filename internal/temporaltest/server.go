package temporaltest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"
	servertest "go.temporal.io/server/temporaltest"

	"github.com/expd/expd/workflowclient"
)

// searchAttributeTimeout bounds registering expd's search attributes on a fresh server.
const searchAttributeTimeout = 30 * time.Second

// shared is the one server of the test binary.
var shared struct {
	once   sync.Once
	server *servertest.TestServer
	client client.Client
	err    error
}

// sharedServer starts the server on first use and returns it with its client.
func sharedServer() (*servertest.TestServer, client.Client, error) {
	shared.once.Do(func() {
		// temporaltest panics when the server cannot start; make that an error for every caller.
		defer func() {
			if r := recover(); r != nil {
				shared.err = fmt.Errorf("temporaltest: start server: %v", r)
			}
		}()
		shared.server = servertest.NewServer(servertest.WithBaseServerOptions(
			temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
				// Kept from temporaltest's own settings, which this option replaces.
				dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
				// Every service caches namespaces, search attribute aliases
				// included; a short refresh makes the attributes added below
				// usable everywhere at once instead of after 2 s.
				dynamicconfig.NamespaceCacheRefreshInterval.Key(): 50 * time.Millisecond,
			}),
		))
		shared.client = shared.server.GetDefaultClient()
		ctx, cancel := context.WithTimeout(context.Background(), searchAttributeTimeout)
		defer cancel()
		if err := workflowclient.EnsureSearchAttributes(ctx, shared.client, shared.server.GetDefaultNamespace()); err != nil {
			shared.err = fmt.Errorf("temporaltest: %w", err)
		}
	})
	return shared.server, shared.client, shared.err
}

// stopSharedServer stops the server if it was started, closing its clients.
func stopSharedServer() {
	if shared.server != nil {
		shared.server.Stop()
	}
}
