package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxURLLength bounds a subscription URL.
const MaxURLLength = 2048

// lookupTimeout bounds the DNS lookup of CheckURL, so a slow resolver cannot stall a request.
const lookupTimeout = 2 * time.Second

// Resolver looks up a host's addresses; *net.Resolver is one, tests use a map.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// blocked are the networks a callback may not reach unless private targets are allowed: every
// IANA special-purpose range that is not globally reachable, plus multicast and documentation.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network", unspecified
	netip.MustParsePrefix("10.0.0.0/8"),      // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local (cloud metadata)
	netip.MustParsePrefix("172.16.0.0/12"),   // RFC 1918
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("192.168.0.0/16"),  // RFC 1918
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast 255.255.255.255
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("::1/128"),         // loopback
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (embeds an IPv4 address)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, benchmarking …)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 (deprecated; embeds an IPv4 address)
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("ff00::/8"),        // multicast
}

// Blocked reports whether ip is an address a callback must not reach: loopback, private,
// link-local, carrier-grade NAT, benchmarking, documentation, unspecified, multicast, reserved
// or broadcast, including IPv4-mapped IPv6 forms of those.
func Blocked(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, p := range blocked {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// errBlocked is the dial-time refusal; it names no URL or address on purpose.
var errBlocked = errors.New("webhook: destination address is not allowed")

// DialControl is a net.Dialer.Control that refuses blocked addresses. It checks the address
// actually being dialled, after DNS resolution, so a host that resolves to a public address
// at create time and to a private one later (DNS rebinding) is still refused.
func DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || Blocked(ap.Addr()) {
		return errBlocked
	}
	return nil
}

// CheckURL validates a subscription URL: absolute http or https with a host and a port, if
// any, from 1 to 65535, at most MaxURLLength. Unless allowPrivate, the host must not be a
// numeric shorthand address (see NumericShorthand: resolvers disagree on what it names, so it
// is refused whatever it names) nor be, or resolve (through r) to, a blocked address. A host
// that does not resolve now is accepted: DNS may be down or the name not yet published, and
// DialControl refuses a blocked address whenever a delivery dials it. Problems are a
// *FieldError on field.
func CheckURL(ctx context.Context, field, raw string, allowPrivate bool, r Resolver) error {
	invalid := func(code, msg string) error {
		return &FieldError{Field: field, Code: code, Message: msg}
	}
	private := func() error {
		return invalid("private_address", "must not point at a loopback, private, link-local, documentation, multicast or reserved address")
	}
	if strings.TrimSpace(raw) == "" {
		return invalid("required", "is required")
	}
	if len(raw) > MaxURLLength {
		return invalid("too_long", fmt.Sprintf("must be at most %d characters", MaxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" ||
		!validPort(u.Port()) {
		return invalid("invalid_url", "must be an absolute http or https URL")
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if NumericShorthand(host) {
		return invalid("numeric_shorthand", "must not be a numeric shorthand address such as 127.1 or 0x7f000001; write IPv4 as four decimal parts")
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") { // RFC 6761: always loopback
		return private()
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return private()
		}
		return nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, _ := r.LookupNetIP(ctx, "ip", host)
	for _, ip := range addrs {
		if Blocked(ip) {
			return private()
		}
	}
	return nil
}

// validPort reports whether port (a URL's, digits only or empty) is empty or 1..65535.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// NumericShorthand reports whether host (without brackets or a trailing dot) is a number-like
// host that is not an address in canonical form: "127.1", "0x7f000001", "2130706433",
// "0177.0.0.1", "0", "1.2.3.4.5". Like the WHATWG URL standard, any host whose last label is a
// decimal or 0x-hexadecimal number counts (no top-level domain is numeric); C resolvers
// (inet_aton) read such hosts as IPv4 addresses in shorthand, octal or hexadecimal, so a check
// by name could disagree with the address finally dialled.
func NumericShorthand(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return false // canonical dotted-quad IPv4, or IPv6
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	digits := last
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		digits = last[2:]
		return strings.Trim(digits, "0123456789abcdefABCDEF") == ""
	}
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}
