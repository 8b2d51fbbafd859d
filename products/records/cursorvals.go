package records

import (
	"bytes"
	"crypto/sha256"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// A cursor names the last record of a page by its sort values and id. A string sort value of
// more than fields.MaxInline bytes would make the cursor too long for a URL (edge/cursor takes
// 4,096 characters), so the cursor holds a reference instead: the value's index key form (its
// first MaxInline bytes) and a digest of the full value. Reading the next page resolves the
// reference from the record the cursor names: to its value when the digest still matches, else
// to the key form itself, which sorts before every full value it stands for, so the page
// resumes at the start of those values: it may repeat records of the previous page (only when
// that record's long value changed in between), never skip one.

// refDigestLen is the length of the digest that follows a reference's key form.
const refDigestLen = 16

// cursorValue is the form of a sort value in a cursor: the value, or a long string's reference.
func cursorValue(enc []byte) []byte {
	form := fields.KeyForm(enc)
	if !fields.Truncated(form) {
		return enc
	}
	sum := sha256.Sum256(enc)
	return append(bytes.Clone(form), sum[:refDigestLen]...)
}

// cursorRef splits a cursor value that is a reference into its key form and digest.
func cursorRef(v []byte) (form, digest []byte, ok bool) {
	n, err := fields.Len(v)
	if err != nil || !fields.Truncated(v[:n]) || len(v) != n+refDigestLen {
		return nil, nil, false
	}
	return v[:n], v[n:], true
}

// validCursorValue reports whether v is an encoded value or a reference, whole.
func validCursorValue(v []byte) bool {
	if _, _, ok := cursorRef(v); ok {
		return true
	}
	n, err := fields.Len(v)
	return err == nil && n == len(v)
}

// resolveAfter replaces the references of a decoded cursor's tuple by the values they stand
// for, read from the record the cursor names (see above).
func (rd *recReader) resolveAfter(c *criteria, after *tuple) error {
	if after == nil {
		return nil
	}
	var rec *tuple
	for i, v := range after.vals {
		form, digest, ok := cursorRef(v)
		if !ok {
			continue
		}
		after.vals[i] = form
		if rec == nil {
			r, err := rd.peek(c.sch.Project, c.sch.Name, after.id)
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			t := c.tupleOf(r)
			rec = &t
		}
		sum := sha256.Sum256(rec.vals[i])
		if bytes.Equal(sum[:refDigestLen], digest) {
			after.vals[i] = rec.vals[i]
		}
	}
	return nil
}
