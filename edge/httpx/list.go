package httpx

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"
)

// Pagination is the pagination part of the list envelope; NextCursor is null on the last page.
type Pagination struct {
	NextCursor *string `json:"nextCursor"`
}

// List is the list envelope every listing answers with: {"items":[...],"pagination":{"nextCursor":...}}.
type List[T any] struct {
	Items      []T        `json:"items"`
	Pagination Pagination `json:"pagination"`
}

// NewList builds the envelope; an empty next means the last page. A nil items slice becomes [].
func NewList[T any](items []T, next string) List[T] {
	if items == nil {
		items = []T{}
	}
	l := List[T]{Items: items}
	if next != "" {
		l.Pagination.NextCursor = &next
	}
	return l
}

// WriteRawList writes the list envelope around items that are already JSON-encoded, so hot
// paths splice stored bytes instead of decoding and re-encoding them.
func WriteRawList(c *fiber.Ctx, items [][]byte, next string) error {
	n := 40 + len(next)
	for _, it := range items {
		n += len(it) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	buf.WriteString(`{"items":[`)
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it)
	}
	buf.WriteString(`],"pagination":{"nextCursor":`)
	if next == "" {
		buf.WriteString("null")
	} else {
		nb, _ := json.Marshal(next)
		buf.Write(nb)
	}
	buf.WriteString("}}")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(buf.Bytes())
}
