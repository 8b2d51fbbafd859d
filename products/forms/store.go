package forms

import (
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Key layout, all under the product prefix "forms":
//
//	forms/sub/<project>/<slug>/<uuid v7>   one submission (JSON of Submission, without URLs)
//
// UUID v7 strings sort by creation time, so a reverse scan of a form's prefix is the inbox,
// newest first, and the last id of a page is the cursor.
const prefixSub = "forms"

func subPrefix(project, slug string) []byte { return store.Prefix(prefixSub, "sub", project, slug) }

func subKey(project, slug, id string) []byte { return store.Key(prefixSub, "sub", project, slug, id) }

// blobKey names the stored bytes of one file of a submission.
func blobKey(project, slug, id string, n int, name string) string {
	return "forms/" + project + "/" + slug + "/" + id + "/" + itoa(n) + "-" + safeName(name)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// safeName keeps letters, digits, dot, dash and underscore of a client file name (at most 80).
func safeName(name string) string {
	out := make([]byte, 0, len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			out = append(out, byte(r))
		case r == '.' && len(out) > 0 && out[len(out)-1] != '.':
			out = append(out, '.')
		default:
			out = append(out, '_')
		}
		if len(out) >= 80 {
			break
		}
	}
	for len(out) > 0 && out[len(out)-1] == '.' {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return "file"
	}
	return string(out)
}
