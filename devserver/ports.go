package devserver

import (
	"fmt"
	"net"
	"strconv"
)

// internalHost is where the services that only this process talks to listen.
const internalHost = "127.0.0.1"

// resolvePort returns port when it can be bound on host, or a free port when
// port is 0. Checking up front turns a taken port into an error here instead
// of a fatal log line deep inside the Temporal or UI server.
func resolvePort(host string, port int, what string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("devserver: %s port %d on %s: %w", what, port, host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dialHost is the address a local client uses to reach a listener bound on host:
// a wildcard listen address is reached through the loopback interface.
func dialHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return internalHost
	}
	return host
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
