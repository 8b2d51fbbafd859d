package records_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestCountsSurviveReapplyOfDigitProjects: the counters' stripe keys must never be taken for
// another section's entries, whatever the projects are called (a project id may be a single
// digit, like a stripe's number), so re-applying a pruning document keeps every count.
func TestCountsSurviveReapplyOfDigitProjects(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("prune: true\n")
	doc.WriteString(tenants)
	doc.WriteString("  - slug: digits\n    projects:\n")
	for s := range 10 {
		fmt.Fprintf(&doc, "      - id: \"%d\"\n        collections:\n          - {name: n, public: true, fields: [{name: title, type: text}]}\n", s)
	}
	h, _ := newHarness(t)
	h.Apply(doc.String())
	for i := range 4 {
		r := h.Admin("POST", "/projects/demo/collections/posts/records",
			map[string]any{"id": fmt.Sprintf("api-%d", i), "published": true, "data": map[string]any{"title": "Api", "category": "news"}})
		if r.Status != 201 {
			t.Fatalf("create = %d %s", r.Status, r.Body)
		}
	}
	count := func() string {
		g := h.Do("GET", posts+"/aggregate?groupBy=category", nil, "X-API-Key", pk)
		n := h.Do("GET", posts+"/aggregate?count=true", nil, "X-API-Key", pk)
		return fmt.Sprintf("%d %s %d %s", g.Status, g.Body, n.Status, n.Body)
	}
	before := count()
	if rep := h.Apply(doc.String()); rep.Deleted != 0 || len(rep.Changes) != 0 {
		t.Errorf("re-applying the same document deleted %d entries: %+v", rep.Deleted, rep.Changes)
	}
	if after := count(); after != before {
		t.Fatalf("groups after re-apply = %s, before %s", after, before)
	}
}
