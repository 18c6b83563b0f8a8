package devserver

import (
	"net"
	"strconv"
	"testing"
)

// Free ports come from below the ephemeral range, where outgoing
// connections cannot take them between their release and the server's
// bind, and stay held until released.
func TestReservedPortsAvoidTheEphemeralRangeAndStayHeld(t *testing.T) {
	var held reservations
	defer held.release()
	var ports []int
	for range 20 {
		p, err := held.reserve(internalHost, 0, "test")
		if err != nil {
			t.Fatal(err)
		}
		if p < pickLow || p >= pickHigh {
			t.Fatalf("port %d outside [%d, %d)", p, pickLow, pickHigh)
		}
		if _, err := net.Listen("tcp", hostPort(internalHost, p)); !isAddressInUse(err) {
			t.Fatalf("reserved port %d could be bound again: %v", p, err)
		}
		ports = append(ports, p)
	}
	held.release()
	for _, p := range ports {
		l, err := net.Listen("tcp", hostPort(internalHost, p))
		if err != nil {
			t.Fatalf("released port %d: %v", p, err)
		}
		_ = l.Close()
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	if _, err := held.reserve(internalHost, taken, "test"); !isAddressInUse(err) {
		t.Fatalf("taken port %s reserved: %v", strconv.Itoa(taken), err)
	}
}
