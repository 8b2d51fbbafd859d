package egress

import "net/netip"

// refused are the ranges Public refuses: "this" network, RFC 1918, carrier-grade NAT,
// loopback, link-local (169.254.169.254 and the other metadata addresses), IETF protocol
// assignments, documentation, benchmarking, multicast and reserved, then the IPv6 equivalents
// (unique local fc00::/7 holds AWS's fd00:ec2::254).
var refused = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// nat64 is the well-known NAT64 prefix: its last 32 bits are an IPv4 address, checked as such.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Public reports whether a is a public unicast address: not in a refused range, checked after
// unmapping ::ffff:a.b.c.d and NAT64 64:ff9b::a.b.c.d to their IPv4 address.
func Public(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, p := range refused {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
