package records

import (
	"bufio"
	"context"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/plans/*.golden from the planner's output")

const planTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: posts
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [news, guides, reviews]}
              - {name: featured, type: boolean}
              - {name: tags, type: multiselect, options: [go, wasm, edge]}
              - {name: views, type: number}
              - {name: day, type: date}
              - {name: author, type: relation, collection: posts}
              - {name: slug, type: text}
`

// planStats are the data the golden plans are made for: 10,000 records and these per-value
// counters (filters on other values count 0).
var planStats = map[string]int64{
	"category=news": 500, "category=guides": 3000, "category=reviews": 6500,
	"featured=true": 100, "featured=false": 9900,
	"tags=go": 4000, "tags=wasm": 50, "tags=edge": 7000,
	"author=a1": 20,
}

// TestPlansGolden prints the plan of each query in testdata/plans/*.golden and compares it
// with the line below the query. A file holds blocks of a query line (URL query syntax, as
// the API receives it; "compound=false" plans as before the compound indexes are built)
// and its plan, indented by a tab; lines starting with # are comments. Run with -update to
// rewrite the plans after a deliberate planner change, then review the diff.
func TestPlansGolden(t *testing.T) {
	t.Parallel()
	svc, _, _ := openCompoundService(t, planTenants)
	sch, err := svc.Schema(context.Background(), "p", "posts")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "plans", "*.golden"))
	if len(files) == 0 {
		t.Fatal("no testdata/plans/*.golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			cases := 0
			sc := bufio.NewScanner(strings.NewReader(string(raw)))
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "\t") {
					continue // a plan: recomputed below its query
				}
				out.WriteString(line + "\n")
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				cases++
				out.WriteString("\t" + planOf(t, sch, line) + "\n")
			}
			if cases == 0 {
				t.Fatal("no queries in the file")
			}
			if *updateGolden {
				if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := out.String(); got != string(raw) {
				t.Errorf("plans differ from %s (rerun with -update and review the diff):\n%s", file, diffLines(string(raw), got))
			}
		})
	}
}

// planOf plans one query line: a list, or an aggregate when it has count, groupBy or distinct.
func planOf(t *testing.T, sch *Schema, line string) string {
	v, err := url.ParseQuery(line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	c, err := compile(sch, v.Get("secret") == "true", v["filter"], v.Get("q"), v.Get("sort"))
	if err != nil {
		return "error " + err.Error()
	}
	st := stats{total: 10000, counts: make([]int64, len(c.filters)), compound: v.Get("compound") != "false"}
	st.projections = st.compound
	for i := range c.filters {
		f := &c.filters[i]
		st.counts[i] = -1
		if !counted(f) {
			continue
		}
		st.counts[i] = 0
		for _, val := range f.Values {
			st.counts[i] += planStats[f.Field+"="+fields.Text(val)]
		}
	}
	if v.Has("count") || v.Has("groupBy") || v.Has("distinct") {
		var group *Field
		if name := v.Get("groupBy") + v.Get("distinct"); name != "" {
			if group = sch.field(name); group == nil {
				t.Fatalf("%q: no field %s", line, name)
			}
		}
		return planVisit(c, st, group).String()
	}
	return planList(c, st, 25, nil).String()
}

// diffLines lists the lines of got that differ from want, with their line numbers.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + c + "\n")
		}
	}
	return b.String()
}
