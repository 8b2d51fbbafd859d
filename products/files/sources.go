package files

import (
	"image"
	"sync"
)

// sources shares one decode of an original among the builds of it that run at the same time:
// a page's first view asks for several sizes of a new image at once (srcset), and the build
// pool runs a project's builds in the order asked, so they overlap. Decoding is most of a
// large original's build (a 4096 px WebP: about a second in Go of 1.3 s), and the builds
// sharing it hold one decoded image instead of one each (each still reserves its own in the
// memory budget, so the budget over-counts, never under-counts). A decode is kept only while
// a build of it runs.
type sources struct {
	mu sync.Mutex
	m  map[string]*source
}

type source struct {
	done  chan struct{} // closed when img and err are set
	img   image.Image
	err   error
	users int // guarded by sources.mu
}

func newSources() *sources { return &sources{m: map[string]*source{}} }

// decode returns the decoded original whose content key is key (its SHA-256 and type; ""
// shares nothing), decoding data once for every caller that comes while it is in use. done
// must be called when the caller no longer reads the image.
func (ss *sources) decode(key string, data []byte, mime string, maxPixels int) (img image.Image, done func(), err error) {
	if key == "" {
		img, err = decodeSource(data, mime, maxPixels)
		return img, func() {}, err
	}
	ss.mu.Lock()
	s, shared := ss.m[key]
	if !shared {
		s = &source{done: make(chan struct{})}
		ss.m[key] = s
	}
	s.users++
	ss.mu.Unlock()
	done = func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if s.users--; s.users == 0 && ss.m[key] == s {
			delete(ss.m, key)
		}
	}
	if !shared {
		s.img, s.err = decodeSource(data, mime, maxPixels)
		close(s.done)
	}
	<-s.done
	return s.img, done, s.err
}
