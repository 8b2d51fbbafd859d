package forms

import (
	"net/netip"
	"strings"
)

// proxies is the set of trusted proxy addresses and networks (config trusted_proxies).
type proxies []netip.Prefix

// parseProxies reads IPs and CIDRs; entries that are neither are ignored.
func parseProxies(list []string) proxies {
	var out proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

func (ps proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the submitter's address: the peer, unless the peer is a trusted proxy; then
// X-Forwarded-For is read from the right (the entries our proxies appended), skipping trusted
// proxies, and the first other valid address is the client. Entries left of it are the
// client's own claims and are never used.
func (ps proxies) clientIP(peer, xff string) string {
	pa, err := netip.ParseAddr(peer)
	if err != nil || !ps.trusted(pa) || xff == "" {
		return peer
	}
	last := ""
	for xff != "" {
		i := strings.LastIndexByte(xff, ',')
		part := strings.TrimSpace(xff[i+1:])
		if i < 0 {
			xff = ""
		} else {
			xff = xff[:i]
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			break
		}
		last = a.Unmap().String()
		if !ps.trusted(a) {
			return last
		}
	}
	if last != "" {
		return last
	}
	return peer
}
