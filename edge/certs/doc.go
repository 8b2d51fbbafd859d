// Package certs gives the gateway HTTPS of its own (decisions.md 9.4): the TLS configuration
// of the https listener, the plain-HTTP listener that answers ACME HTTP-01 challenges and
// redirects everything else to https, and the tenants' own domains.
//
// In mode acme the certificates come from an ACME CA through caddyserver/certmagic: the
// names of tls.domains are obtained at start, a tenant domain at the first handshake that
// names it (on demand) — and only when a project of the tenants document lists it, so an
// unknown name in a TLS hello never reaches the CA. Certificates, their keys, the ACME account
// and the challenge tokens are kept in the gateway's store through Storage (certmagic's
// Storage interface), whose locks are leases in the store (edge/lease): on the shared postgres
// backend one node obtains or renews a certificate while the others wait and then load it,
// and any node answers a challenge another node started. A node restarted while the CA is
// unreachable serves what the store holds. certmagic renews a certificate in the last third
// of its life, in the background: tenant domains' certificates too, which certmagic leaves to
// handshakes when on demand, because the Manager keeps the listed ones (loaded from the store
// on every node) under its managed configuration, in step with the tenants documents. What
// the CA answers (obtained, renewed, failed) is logged and counted on
// /metrics, and a failure never stops the gateway.
//
// In mode files the certificate and key come from two PEM files, loaded at start.
//
// The project section "domains" (Domains) lists a project's domains, each serving the
// project's assets, its embed pages or its API; edge's host routing asks Domains.TenantHost
// which project and product a request's host belongs to.
package certs
