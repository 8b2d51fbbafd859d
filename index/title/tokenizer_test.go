package title

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
)

// FuzzWordsTokenizer: wordsTokenizer makes the tokens of bleve's whitespace tokenizer, which
// indexes made before it keep using (their mapping names it), so both must agree.
func FuzzWordsTokenizer(f *testing.F) {
	for _, s := range []string{"", "a", "demo/posts:hello demo/posts:world", "  lead and trail  ",
		"tab\tnew\nline\u00a0nbsp\u2003em", "émoji 🎉 ok", "bad \xff utf8 after", "x\uFFFDy z", "\u3000ideographic\u3000space"} {
		f.Add([]byte(s))
	}
	ws, err := whitespace.TokenizerConstructor(nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, want := wordsTokenizer{}.Tokenize(in), ws.Tokenize(in)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Tokenize(%q) = %v, bleve's whitespace tokenizer %v", in, got, want)
		}
	})
}

func BenchmarkWordsTokenizer(b *testing.B) {
	ws, _ := whitespace.TokenizerConstructor(nil, nil)
	in := []byte("bench/posts:rulosaze bench/posts:satosaka")
	b.Run("bleve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ws.Tokenize(in)
		}
	})
	b.Run("words", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			wordsTokenizer{}.Tokenize(in)
		}
	})
}

// TestIndexOfWhitespaceTokenizerStillServes: an index made before wordsTokenizer (its
// mapping names bleve's whitespace tokenizer) opens as it is, complete, and indexes and finds
// titles as before.
func TestIndexOfWhitespaceTokenizerStillServes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/t.bleve"
	m, err := newMapping(whitespace.Name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, config())
	if err != nil {
		t.Fatal(err)
	}
	old, err := opened(b, false, true)
	if err != nil {
		t.Fatal(err)
	}
	ob := old.NewBatch()
	if err := ob.Put("p", "c", "a", "Hello old world", 1); err != nil {
		t.Fatal(err)
	}
	if err := ob.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := old.MarkComplete(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Fresh {
		t.Fatal("an index of the whitespace tokenizer was rebuilt")
	}
	nb := x.NewBatch()
	if err := nb.Put("p", "c", "b", "hello new\tworld", 2); err != nil {
		t.Fatal(err)
	}
	if err := nb.Commit(); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"hel wor": "[a b]", "new": "[b]", "old": "[a]"} {
		ids, err := x.Search("p", "c", Words(q), 10)
		slices.Sort(ids)
		if err != nil || fmt.Sprint(ids) != want {
			t.Errorf("Search(%q) = %v, %v; want %s", q, ids, err, want)
		}
	}
}
