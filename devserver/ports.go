package devserver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"syscall"
)

// internalHost is where the services that only this process talks to listen.
const internalHost = "127.0.0.1"

// Free ports are drawn from [pickLow, pickHigh), below Linux's ephemeral
// range (32768-60999): a reserved port is released just before the Temporal
// or UI server binds it, and one from the ephemeral range could meanwhile be
// taken as the local port of any outgoing connection (to the database, the
// frontend, ...).
const (
	pickLow      = 20000
	pickHigh     = 32000
	pickAttempts = 200
)

// errPortTaken marks a start that lost a port between its release and the
// server's bind (another process took it): worth a retry on fresh ports.
var errPortTaken = errors.New("a port was taken between its reservation and the server's bind")

// reservations hold ports, each by a listener of this process, until the
// server meant to use them is about to bind them. The Temporal and UI
// servers open their own listeners, so a port has to be released for them;
// holding it until then keeps other processes (another `expd dev` picking
// ports at the same moment) off it for all but that instant.
type reservations []net.Listener

// reserve reserves a port (reservePort), keeps its listener and returns
// the port.
func (r *reservations) reserve(host string, port int, what string) (int, error) {
	l, err := reservePort(host, port, what)
	if err != nil {
		return 0, err
	}
	*r = append(*r, l)
	return l.Addr().(*net.TCPAddr).Port, nil
}

// reservePort listens on host:port; port 0 takes a free port from [pickLow,
// pickHigh). A taken port is an error here instead of a fatal log line deep
// inside the Temporal or UI server.
func reservePort(host string, port int, what string) (net.Listener, error) {
	if port == 0 {
		for range pickAttempts {
			if l, err := net.Listen("tcp", hostPort(host, pickLow+rand.IntN(pickHigh-pickLow))); err == nil {
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", hostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("devserver: %s port %d on %s: %w", what, port, host, err)
	}
	return l, nil
}

// release frees every reserved port for the server to bind.
func (r *reservations) release() {
	for _, l := range *r {
		_ = l.Close()
	}
	*r = nil
}

// isAddressInUse reports whether err is a bind that found its port taken.
func isAddressInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

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
