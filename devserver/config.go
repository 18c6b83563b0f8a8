package devserver

import (
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

// clusterName names the single cluster of the dev server.
const clusterName = "active"

// listener is where one Temporal service listens.
type listener struct {
	bindIP   string
	port     int
	httpPort int // the frontend's HTTP API; 0 for the other services (no HTTP API)
}

// address is how the other services and local clients dial the listener.
func (l listener) address() string { return hostPort(dialHost(l.bindIP), l.port) }

// httpAddress is how local clients reach the frontend's HTTP API.
func (l listener) httpAddress() string { return hostPort(dialHost(l.bindIP), l.httpPort) }

// serviceListeners places each of the four Temporal services.
type serviceListeners map[primitives.ServiceName]listener

// reserveServiceListeners reserves the frontend's ports where the options
// say and ports for history, matching and worker on the loopback
// interface, held in held until the caller releases them for Temporal.
func reserveServiceListeners(opt Options, held *reservations) (serviceListeners, error) {
	grpcPort, err := held.reserve(opt.Host, opt.FrontendPort, "frontend")
	if err != nil {
		return nil, err
	}
	httpPort, err := held.reserve(opt.Host, opt.HTTPPort, "frontend HTTP")
	if err != nil {
		return nil, err
	}
	listeners := serviceListeners{primitives.FrontendService: {bindIP: opt.Host, port: grpcPort, httpPort: httpPort}}
	for _, svc := range []primitives.ServiceName{primitives.HistoryService, primitives.MatchingService, primitives.WorkerService} {
		port, err := held.reserve(internalHost, 0, string(svc))
		if err != nil {
			return nil, err
		}
		listeners[svc] = listener{bindIP: internalHost, port: port}
	}
	return listeners, nil
}

// serverOptions assembles the Temporal server: static membership (every
// service is in this process, so no ringpop), no authorization, logs to slog.
func serverOptions(sql *config.SQL, listeners serviceListeners, logger slogLogger) []temporal.ServerOption {
	hosts := make(map[primitives.ServiceName]static.Hosts, len(listeners))
	for svc, l := range listeners {
		hosts[svc] = static.SingleLocalHost(l.address())
	}
	return []temporal.ServerOption{
		temporal.WithConfig(serverConfig(sql, listeners)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorization.NewNoopAuthorizer()),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return authorization.NewNoopClaimMapper() }),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// The UI issues bursts of list and count queries; the default of 10/s throttles it.
			dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		}),
	}
}

// serverConfig is the Temporal server configuration of the dev server:
// one SQLite store for state and visibility, one history shard, no
// archival, metrics or pprof.
func serverConfig(sql *config.SQL, listeners serviceListeners) *config.Config {
	frontend := listeners[primitives.FrontendService]
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = internalHost
	conf.Persistence = config.Persistence{
		DefaultStore:     sqliteplugin.PluginName,
		VisibilityStore:  sqliteplugin.PluginName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sql}},
	}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend.address(),
				HTTPAddress:            frontend.httpAddress(),
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = make(map[string]config.Service, len(listeners))
	for svc, l := range listeners {
		conf.Services[string(svc)] = config.Service{RPC: config.RPC{GRPCPort: l.port, HTTPPort: l.httpPort, BindOnIP: l.bindIP}}
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend.address()
	return &conf
}
