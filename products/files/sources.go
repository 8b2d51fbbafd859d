package files

import (
	"container/list"
	"image"
	"sync"
)

// sources shares one decode of an original among the builds of it: a page's first view asks
// for several sizes of a new image (srcset), at once or one after the other, and the build
// pool runs a project's builds in the order asked. Decoding is most of a large original's
// build (a 4096 px WebP: about a second in Go of 1.3 s) and the largest part of a small JPEG's
// (about 2.5 ms of 7). Builds running at once hold one decoded image instead of one each (each
// still reserves its own in the memory budget, so the budget over-counts, never
// under-counts). When the last build using a decode ends, the decode is kept for the next
// ones, the most recently used first, while the kept decodes together hold at most keep bytes
// (a part of files.variant_memory_mb that the pool does not hand to builds).
type sources struct {
	keep int64 // bytes of decodes kept when no build uses them (0: none)

	mu   sync.Mutex
	m    map[string]*source
	lru  *list.List // of *source kept with no user, least recently used at the front
	held int64      // their bytes
}

type source struct {
	key   string
	done  chan struct{} // closed when img and err are set
	img   image.Image
	err   error
	size  int64         // img's bytes, set with it
	users int           // guarded by sources.mu
	kept  *list.Element // in sources.lru while no build uses it; guarded by sources.mu
}

func newSources(keep int64) *sources {
	return &sources{keep: max(0, keep), m: map[string]*source{}, lru: list.New()}
}

// decode returns the decoded original whose content key is key (its SHA-256 and type; ""
// shares nothing), decoding data once for every caller that comes while it is in use or kept.
// done must be called when the caller no longer reads the image.
func (ss *sources) decode(key string, data []byte, mime string, maxPixels int) (img image.Image, done func(), err error) {
	if key == "" {
		img, err = decodeSource(data, mime, maxPixels)
		return img, func() {}, err
	}
	ss.mu.Lock()
	s, shared := ss.m[key]
	if !shared {
		s = &source{key: key, done: make(chan struct{})}
		ss.m[key] = s
	}
	if s.kept != nil {
		ss.lru.Remove(s.kept)
		s.kept, ss.held = nil, ss.held-s.size
	}
	s.users++
	ss.mu.Unlock()
	done = func() { ss.release(s) }
	if !shared {
		s.img, s.err = decodeSource(data, mime, maxPixels)
		if s.err == nil {
			s.size = imageBytes(s.img)
		}
		close(s.done)
	}
	<-s.done
	return s.img, done, s.err
}

// release ends one build's use of s: the last one keeps a good decode that fits, dropping the
// least recently used ones beyond keep, and forgets the rest.
func (ss *sources) release(s *source) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.users--; s.users > 0 || ss.m[s.key] != s {
		return
	}
	if s.err != nil || s.size > ss.keep {
		delete(ss.m, s.key)
		return
	}
	s.kept, ss.held = ss.lru.PushBack(s), ss.held+s.size
	for ss.held > ss.keep {
		old := ss.lru.Remove(ss.lru.Front()).(*source)
		old.kept, ss.held = nil, ss.held-old.size
		delete(ss.m, old.key)
	}
}

// imageBytes is the memory of a decoded image's pixels.
func imageBytes(m image.Image) int64 {
	switch t := m.(type) {
	case *image.YCbCr:
		return int64(len(t.Y) + len(t.Cb) + len(t.Cr))
	case *image.NYCbCrA:
		return int64(len(t.Y) + len(t.Cb) + len(t.Cr) + len(t.A))
	case *image.RGBA64:
		return int64(len(t.Pix))
	case *image.NRGBA64:
		return int64(len(t.Pix))
	case *image.Gray16:
		return int64(len(t.Pix))
	case *image.RGBA:
		return int64(len(t.Pix))
	case *image.NRGBA:
		return int64(len(t.Pix))
	case *image.Gray:
		return int64(len(t.Pix))
	case *image.CMYK:
		return int64(len(t.Pix))
	case *image.Paletted:
		return int64(len(t.Pix) + 4*len(t.Palette))
	}
	b := m.Bounds()
	return int64(b.Dx()) * int64(b.Dy()) * 8 // the widest of the standard forms (64-bit RGBA)
}
