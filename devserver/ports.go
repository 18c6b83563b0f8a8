package devserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// internalHost is where the services that only this process talks to listen.
const internalHost = "127.0.0.1"

// Free ports are drawn from [pickLow, pickHigh), below Linux's ephemeral
// range (32768-60999). A port is checked and released before the Temporal
// or UI server binds it; one from the ephemeral range could meanwhile be
// taken as the local port of any outgoing connection (to the database,
// the frontend, ...), and the server would then crash on bind.
const (
	pickLow      = 20000
	pickHigh     = 32000
	pickAttempts = 200
)

// resolvePort returns port when it can be bound on host, or a free port when
// port is 0. Checking up front turns a taken port into an error here instead
// of a fatal log line deep inside the Temporal or UI server.
func resolvePort(host string, port int, what string) (int, error) {
	if port == 0 {
		for range pickAttempts {
			candidate := pickLow + rand.IntN(pickHigh-pickLow)
			if bindable(host, candidate) {
				return candidate, nil
			}
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("devserver: %s port %d on %s: %w", what, port, host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func bindable(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
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
