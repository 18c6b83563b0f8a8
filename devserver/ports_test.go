package devserver

import (
	"net"
	"strconv"
	"testing"
)

// Free ports come from below the ephemeral range, where outgoing
// connections cannot take them between the check and the server's bind.
func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	for range 20 {
		p, err := resolvePort(internalHost, 0, "test")
		if err != nil {
			t.Fatal(err)
		}
		if p < pickLow || p >= pickHigh {
			t.Fatalf("port %d outside [%d, %d)", p, pickLow, pickHigh)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	if _, err := resolvePort(internalHost, taken, "test"); err == nil {
		t.Fatalf("taken port %s resolved", strconv.Itoa(taken))
	}
}
