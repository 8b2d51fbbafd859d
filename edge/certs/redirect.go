package certs

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// HTTPHandler is what the http listener (tls.http_listen) answers: the ACME HTTP-01
// challenges (this node's, or, from the store, another node's), and a 308 redirect to the same
// URL on https for every other request (308 keeps the method and body).
func (m *Manager) HTTPHandler() http.Handler {
	redirect := http.HandlerFunc(m.redirect)
	m.mu.Lock()
	issuer := m.issuer
	m.mu.Unlock()
	if issuer == nil {
		return redirect
	}
	return issuer.HTTPChallengeHandler(redirect)
}

// redirect answers 308 with the https URL of the request.
func (m *Manager) redirect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || strings.ContainsAny(host, "/\\@ ") {
		http.Error(w, "a Host header is required", http.StatusBadRequest)
		return
	}
	if strings.Contains(host, ":") { // an IPv6 literal
		host = "[" + host + "]"
	}
	if p := portOf(m.o.HTTPSAddr); p != 0 && p != 443 {
		host += ":" + strconv.Itoa(p)
	}
	w.Header().Set("Connection", "close")
	http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
}
