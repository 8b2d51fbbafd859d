// Package membership serves GET {membership_base_url}/config: the boot configuration of a
// project's active sign-in connection (the identity provider's publishable key, instance
// domain, appearance and the sign-up / organizations switches), read by the browser package
// @gatehouse/membership. It never serves the provider's secret key: the struct it encodes has
// no field for it.
//
// Connections are the membership section of the tenants document (section.go); at most one per project
// is active, and apply refuses a publishable key that does not decode to the instance domain
// (CheckIdpKey). Answers are cached per project in an LRU that tenancy.OnChange
// invalidates, so activating another connection switches the answer at once. See
// docs/membership.md and "Membership" in the public REST interface.
package membership
