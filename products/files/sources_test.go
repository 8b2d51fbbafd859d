package files

import (
	"errors"
	"os"
	"testing"
)

// Builds of the same original running at once get one decoded image; once none uses it, the
// next build decodes again; a failed decode is shared as the error; an empty key shares nothing.
func TestSourcesShareADecode(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/photos/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	ss := newSources(0)
	a, doneA, err := ss.decode("k", data, "image/jpeg", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	b, doneB, err := ss.decode("k", data, "image/jpeg", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("a second build of the same original decoded it again")
	}
	doneA()
	doneB()
	if len(ss.m) != 0 {
		t.Fatalf("%d decodes kept after their builds", len(ss.m))
	}
	c, doneC, _ := ss.decode("k", data, "image/jpeg", 1<<30)
	doneC()
	if c == a {
		t.Error("a decode was kept after every build of it ended")
	}
	_, doneD, errD := ss.decode("bad", data[:100], "image/jpeg", 1<<30)
	_, doneE, errE := ss.decode("bad", data[:100], "image/jpeg", 1<<30)
	if !errors.Is(errD, errUnreadable) || errE != errD {
		t.Errorf("shared failed decode: %v, %v", errD, errE)
	}
	doneD()
	doneE()
	x, doneX, _ := ss.decode("", data, "image/jpeg", 1<<30)
	y, doneY, _ := ss.decode("", data, "image/jpeg", 1<<30)
	doneX()
	doneY()
	if x == y || len(ss.m) != 0 {
		t.Error("builds without a content key shared a decode")
	}
}

// With room to keep decodes, the next builds of an original decode it no more after the last
// build of it ended, the least recently used are dropped beyond the bound, and failed
// decodes and decodes larger than the bound are not kept.
func TestSourcesKeepRecentDecodes(t *testing.T) {
	t.Parallel()
	photo, err := os.ReadFile("testdata/photos/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	gray, err := os.ReadFile("testdata/photos/gray.jpg")
	if err != nil {
		t.Fatal(err)
	}
	size := func(data []byte) int64 {
		m, err := decodeSource(data, "image/jpeg", 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		return imageBytes(m)
	}
	type step struct {
		key    string
		data   []byte
		reused bool // the image of the last decode of key
	}
	for _, tc := range []struct {
		name  string
		keep  int64
		steps []step
		held  int
	}{
		{"nothing kept", 0, []step{{"p", photo, false}, {"p", photo, false}}, 0},
		{"one kept", size(photo), []step{{"p", photo, false}, {"p", photo, true}, {"p", photo, true}}, 1},
		{"larger than the bound", size(photo) - 1, []step{{"p", photo, false}, {"p", photo, false}}, 0},
		{"least recently used dropped", 2 * size(photo), []step{
			{"p", photo, false}, {"g", gray, false}, {"p", photo, true}, {"q", photo, false}, {"p", photo, true}, {"g", gray, false},
		}, 2},
		{"failed decodes not kept", 1 << 30, []step{{"bad", photo[:100], false}, {"bad", photo[:100], false}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := newSources(tc.keep)
			last := map[string]any{}
			for i, st := range tc.steps {
				img, done, err := ss.decode(st.key, st.data, "image/jpeg", 1<<30)
				done()
				var got any = img
				if err != nil {
					got = err
				}
				if reused := last[st.key] != nil && last[st.key] == got; reused != st.reused {
					t.Errorf("step %d (%s): decoded once before: %v, want %v", i, st.key, reused, st.reused)
				}
				last[st.key] = got
			}
			if ss.lru.Len() != tc.held || len(ss.m) != tc.held || ss.held > tc.keep {
				t.Errorf("kept %d decodes (%d in the map, %d bytes of %d), want %d", ss.lru.Len(), len(ss.m), ss.held, tc.keep, tc.held)
			}
		})
	}
}
