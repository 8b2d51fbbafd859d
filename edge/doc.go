// Package edge is the HTTP server in front of every product: one fiber app that routes by host
// and path prefix, runs the shared middleware (request ids, access logs, panic recovery,
// metrics), mounts each product under {public_url}/<segment> and the admin API under
// /admin/v1, and shuts down gracefully. It imports no product: products come in through the
// Product interface, wired in edge/cmd/gatehouse.
package edge
