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
	ss := newSources()
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
