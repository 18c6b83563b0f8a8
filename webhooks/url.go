package webhooks

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLen bounds an endpoint URL.
const MaxURLLen = 2048

// URLError is an endpoint URL expd refuses; Reason says why.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return "webhook endpoint url " + e.Reason }

// Resolver looks up a host's addresses (net.DefaultResolver in
// production; tests pass a fake).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL validates an endpoint URL at registration. Outside dev mode
// (allowPrivate false) it must be https and its host must not be, or
// resolve to, a loopback, private, link-local, unspecified or otherwise
// non-public address (requests from expd's network to its neighbours are
// not something a customer may ask for). A host that does not resolve now
// is accepted: the delivery-time check (Sender's dialer) is the guard that
// counts, since a name may resolve differently later. In dev mode
// (`expd dev`) http and local addresses are allowed, so a listener on the
// developer's machine can subscribe.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, r Resolver) error {
	if raw == "" {
		return &URLError{Reason: "is required"}
	}
	if len(raw) > MaxURLLen {
		return &URLError{Reason: fmt.Sprintf("is longer than %d bytes", MaxURLLen)}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return &URLError{Reason: "is not an absolute URL"}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return &URLError{Reason: "must use https"}
	default:
		return &URLError{Reason: "must use https"}
	}
	if u.User != nil {
		return &URLError{Reason: "must not carry credentials (user:password@)"}
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return &URLError{Reason: "must not have a fragment"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{Reason: "has no host"}
	}
	if allowPrivate {
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !Public(addr) {
			return &URLError{Reason: "points at a private, loopback or link-local address"}
		}
		return nil
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") || !strings.Contains(lower, ".") {
		return &URLError{Reason: "must name a public host"}
	}
	if r == nil {
		return nil
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // unresolvable now; the delivery-time check decides
	}
	for _, a := range addrs {
		if !Public(a) {
			return &URLError{Reason: "resolves to a private, loopback or link-local address"}
		}
	}
	return nil
}

// nonPublic lists ranges that are not globally routable beyond what
// netip's predicates cover (carrier-grade NAT, benchmarking, the
// IPv4-mapped and NAT64 forms are unmapped before the check).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (embeds IPv4 anywhere)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// Public tells whether a is a globally routable unicast address.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
