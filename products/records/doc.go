// Package records is the Records product: server-side queries over the published records of
// public collections, under {records_base_url}/projects/<project>/collections/<collection>
// (interface section "Records", decisions.md section 5), and the admin write routes of
// decisions.md section 4 (create or replace, delete, publish, unpublish, NDJSON import).
//
// Storage (store.go): each record is one badger value holding its published flag, the
// order-preserving encodings of its field values (for filters and sorts without JSON decoding),
// its fields as raw JSON segments (for fields= and populate) and its public and secret
// projections encoded at write time, spliced into responses as they are. Published records have
// one ordered index entry per field value (index/fields), a counter per collection gives exact
// totals, and titles are searched through index/title (bleve), which a journal in badger
// repairs after a crash. Queries (query.go, aggregate.go) are compiled and planned by the
// pure planner (planner.go) into a printable plan (plan.go, golden tests in testdata/plans)
// that the scans execute (scans.go): the most selective index or the title search gives
// candidates, else the sort index is walked in order; everything streams.
//
// docs/records.md describes the behaviour and the choices the interface left open.
package records
