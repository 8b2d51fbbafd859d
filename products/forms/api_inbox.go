package forms

import (
	"bufio"
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// wantsCSV reports whether an inbox request asks for CSV (Accept: text/csv preferred to JSON).
func wantsCSV(c *fiber.Ctx) bool {
	return c.Get(fiber.HeaderAccept) != "" && c.Accepts(fiber.MIMEApplicationJSON, "text/csv") == "text/csv"
}

// inboxCSV answers GET .../submissions with Accept: text/csv: the whole inbox, streamed.
func (p *API) inboxCSV(c *fiber.Ctx) error {
	project, slug := utils.CopyString(c.Params("project")), utils.CopyString(c.Params("slug"))
	head, err := p.svc.CSVHeader(c.UserContext(), project, slug)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8; header=present")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+safeName(project+"-"+slug)+`-submissions.csv"`)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// The handler has returned: the request context is gone, the copies above are not.
		if err := p.svc.WriteCSV(context.Background(), project, slug, head, w); err != nil {
			p.svc.log.Error("forms: CSV export", "project", project, "form", slug, "err", err)
		}
		_ = w.Flush()
	})
	return nil
}

// deleteSubmission answers DELETE .../submissions/{id}: 204, the submission and its files gone.
func (p *API) deleteSubmission(c *fiber.Ctx) error {
	project, slug, id := utils.CopyString(c.Params("project")), utils.CopyString(c.Params("slug")), utils.CopyString(c.Params("id"))
	if err := p.svc.DeleteSubmission(c.UserContext(), project, slug, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
