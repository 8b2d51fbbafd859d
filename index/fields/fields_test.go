package fields

import (
	"bytes"
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

func TestNumberOrder(t *testing.T) {
	t.Parallel()
	nums := []float64{math.Inf(-1), -1e300, -1000.5, -3, -1, -0.5, 0, 0.25, 1, 2, 10, 1e9, math.Inf(1)}
	for i := 1; i < len(nums); i++ {
		a, b := Number(nums[i-1]), Number(nums[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("Number(%v) >= Number(%v)", nums[i-1], nums[i])
		}
	}
	if !bytes.Equal(Number(0), Number(math.Copysign(0, -1))) {
		t.Errorf("Number(-0) != Number(0)")
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []any{nil, true, false, 0.0, -2.5, 1e20, "", "a", "a\x00b", "héllo", "\x00\x00\x01"}
	for _, v := range cases {
		var enc []byte
		switch x := v.(type) {
		case nil:
			enc = Null()
		case bool:
			enc = Bool(x)
		case float64:
			enc = Number(x)
		case string:
			enc = String(x)
		}
		got, err := Decode(enc)
		if err != nil || got != v {
			t.Errorf("Decode(encode(%#v)) = %#v, %v", v, got, err)
		}
		// An id appended after the value splits back off.
		e, id, err := Split(nil, append(append([]byte{}, enc...), "rec-1"...))
		if err != nil || !bytes.Equal(e, enc) || id != "rec-1" {
			t.Errorf("Split(%#v+id) = %q, %q, %v", v, e, id, err)
		}
	}
}

func TestStringOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(1))
	alphabet := "\x00\x01ab\xff"
	var strs []string
	for i := 0; i < 500; i++ {
		var b strings.Builder
		for j := r.Intn(5); j > 0; j-- {
			b.WriteByte(alphabet[r.Intn(len(alphabet))])
		}
		strs = append(strs, b.String())
	}
	for i := 0; i < len(strs); i++ {
		for j := 0; j < 20; j++ {
			a, b := strs[i], strs[r.Intn(len(strs))]
			want := strings.Compare(a, b)
			if got := bytes.Compare(String(a), String(b)); sign(got) != want {
				t.Fatalf("Compare(String(%q), String(%q)) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func TestScan(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	prefix := store.Prefix("t", "views")
	vals := map[string]float64{"a": 5, "b": 1, "c": 5, "d": 10, "e": -2}
	err = db.Update(ctx, func(txn *store.Txn) error {
		for id, v := range vals {
			if err := Put(txn, prefix, [][]byte{Number(v)}, id); err != nil {
				return err
			}
		}
		return Put(txn, prefix, [][]byte{Null()}, "z")
	})
	if err != nil {
		t.Fatal(err)
	}
	scan := func(o ScanOptions) []string {
		var out []string
		_ = db.View(ctx, func(txn *store.Txn) error {
			return Scan(txn, prefix, o, func(_ []byte, id string) (bool, error) {
				out = append(out, id)
				return true, nil
			})
		})
		return out
	}
	num := func(v float64) []byte { return Number(v) }
	cases := []struct {
		name string
		o    ScanOptions
		want string
	}{
		{"all", ScanOptions{}, "zebacd"},
		{"all reverse", ScanOptions{Reverse: true}, "dcabez"},
		{"eq", ScanOptions{Range: Eq(num(5))}, "ac"},
		{"eq reverse", ScanOptions{Range: Eq(num(5)), Reverse: true}, "ca"},
		{"gt", ScanOptions{Range: Range{Lo: Bound{Value: num(1)}, Hi: Bound{Value: []byte{TagNumber + 1}}}}, "acd"},
		{"lte numbers only", ScanOptions{Range: Range{Lo: Bound{Value: []byte{TagNumber}, Inclusive: true}, Hi: Bound{Value: num(5), Inclusive: true}}}, "ebac"},
		{"lt reverse", ScanOptions{Range: Range{Lo: Bound{Value: []byte{TagNumber}, Inclusive: true}, Hi: Bound{Value: num(5)}}, Reverse: true}, "be"},
		{"after", ScanOptions{After: Entry(prefix, num(5), "a")}, "cd"},
		{"after reverse", ScanOptions{After: Entry(prefix, num(5), "c"), Reverse: true}, "abez"},
		{"after in range", ScanOptions{Range: Eq(num(5)), After: Entry(prefix, num(5), "a")}, "c"},
	}
	for _, tc := range cases {
		if got := strings.Join(scan(tc.o), ""); got != tc.want {
			t.Errorf("Scan(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
	var n int
	_ = db.View(ctx, func(txn *store.Txn) error {
		n, err = Count(txn, prefix, Range{}, 3)
		return err
	})
	if n != 3 {
		t.Errorf("Count(limit 3) = %d", n)
	}
}

func TestSubScan(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	prefix := store.Prefix("t", "cat", "views")
	// Lead values whose strings are prefixes of each other, and a bool, must not share entries.
	rows := []struct {
		lead []byte
		v    float64
		id   string
	}{
		{String("a"), 3, "p"}, {String("a"), 1, "q"}, {String("a"), 3, "r"},
		{String("ab"), 2, "s"}, {String(""), 9, "t"}, {Bool(true), 4, "u"},
	}
	err = db.Update(ctx, func(txn *store.Txn) error {
		for _, r := range rows {
			if err := Put(txn, Sub(prefix, r.lead), [][]byte{Number(r.v)}, r.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		lead []byte
		o    ScanOptions
		want string
	}{
		{"a", String("a"), ScanOptions{}, "qpr"},
		{"a reverse", String("a"), ScanOptions{Reverse: true}, "rpq"},
		{"a reverse after", String("a"), ScanOptions{Reverse: true, After: Entry(Sub(prefix, String("a")), Number(3), "r")}, "pq"},
		{"a reverse after a missing entry", String("a"), ScanOptions{Reverse: true, After: Entry(Sub(prefix, String("a")), Number(2), "s")}, "q"},
		{"a gte 2", String("a"), ScanOptions{Range: Range{Lo: Bound{Value: Number(2), Inclusive: true}, Hi: Bound{Value: []byte{TagNumber + 1}}}}, "pr"},
		{"ab", String("ab"), ScanOptions{Reverse: true}, "s"},
		{"empty string", String(""), ScanOptions{}, "t"},
		{"true", Bool(true), ScanOptions{Reverse: true}, "u"},
		{"false", Bool(false), ScanOptions{}, ""},
	}
	for _, tc := range cases {
		var got []string
		err := db.View(ctx, func(txn *store.Txn) error {
			return Scan(txn, Sub(prefix, tc.lead), tc.o, func(_ []byte, id string) (bool, error) {
				got = append(got, id)
				return true, nil
			})
		})
		if err != nil || strings.Join(got, "") != tc.want {
			t.Errorf("Scan(Sub(%s)) = %q, %v; want %q", tc.name, strings.Join(got, ""), err, tc.want)
		}
	}
}

func TestScanValues(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	prefix := Sub(store.Prefix("t", "cat", "views"), String("a"))
	err = db.Update(ctx, func(txn *store.Txn) error {
		for i, id := range []string{"p", "q", "r"} {
			if err := txn.Set(Entry(prefix, Number(float64(i)), id), []byte("v"+id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = db.View(ctx, func(txn *store.Txn) error {
		o := ScanOptions{Range: Range{Lo: Bound{Value: Number(1), Inclusive: true}}, Reverse: true}
		return ScanValues(txn, prefix, o, func(enc, id, val []byte) (bool, error) {
			got = append(got, Text(enc)+string(id)+"="+string(val))
			return true, nil
		})
	})
	if err != nil || strings.Join(got, " ") != "2r=vr 1q=vq" {
		t.Errorf("ScanValues = %q, %v", got, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(String("hello"))
	f.Add(Number(3.5))
	f.Add([]byte{TagString, 0, 0xFF, 0, 1})
	f.Add([]byte{TagString, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Len(b)
		if err != nil || truncated(b[:n]) {
			return // a long string's key form is not a value
		}
		v, err := Decode(b[:n])
		if err != nil {
			t.Fatalf("Decode of a value Len accepted: %v", err)
		}
		var back []byte
		switch x := v.(type) {
		case nil:
			back = Null()
		case bool:
			back = Bool(x)
		case float64:
			if math.IsNaN(x) {
				return
			}
			back = Number(x)
		case string:
			back = String(x)
		}
		if !bytes.Equal(back, b[:n]) && !(b[0] == TagBool && b[1] > 1) && !(b[0] == TagNumber) {
			t.Fatalf("re-encode(%x) = %x", b[:n], back)
		}
	})
}
