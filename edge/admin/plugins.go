package admin

import (
	"context"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// PluginHost is what the plugin admin routes read of the Wasm host. The composition root
// adapts plugins/host to it (edge imports no plugin host).
type PluginHost interface {
	// PluginStatus lists a project's plugins in call order (refused ones included).
	PluginStatus(project string) []PluginStatus
	// PluginLogs returns up to n of the newest lines a plugin's log holds, newest first;
	// ok is false when the project has no such plugin.
	PluginLogs(project, name string, n int) (lines []PluginLogLine, ok bool)
}

// PluginStatus is one plugin as GET .../plugins shows it (decisions.md 8.2). Every field is
// always present: lastError and lastErrorAt are null when there is none (decisions.md 9.5).
type PluginStatus struct {
	Name        string           `json:"name"`
	Hooks       []string         `json:"hooks"`
	Status      string           `json:"status"` // running | refused | disabled
	LastError   *string          `json:"lastError"`
	LastErrorAt *string          `json:"lastErrorAt"` // the interface's timestamp form
	Calls       int64            `json:"calls"`
	Errors      map[string]int64 `json:"errors"` // failed calls by kind
}

// PluginLogLine is one line of a plugin's log: what the guest printed (stdout, stderr, the
// log host function) and the host's notes about its failures.
type PluginLogLine struct {
	Time string `json:"time"`
	Text string `json:"text"`
}

// Plugin log lines a request may ask for (?limit=).
const (
	defaultLogLines = 100
	maxLogLines     = 1000
)

// Plugins serves the plugin status and log routes.
type Plugins struct {
	t *tenancy.Service
	h PluginHost
}

// NewPlugins returns the plugin admin routes over the tenancy service (which projects exist)
// and the plugin host.
func NewPlugins(t *tenancy.Service, h PluginHost) *Plugins { return &Plugins{t: t, h: h} }

// MountAdmin registers GET /projects/{project}/plugins and .../plugins/{name}/logs.
func (p *Plugins) MountAdmin(r fiber.Router) {
	r.Get("/projects/:project/plugins", p.list)
	r.Get("/projects/:project/plugins/:name/logs", p.logs)
}

func (p *Plugins) project(ctx context.Context, id string) error {
	if _, err := p.t.Project(ctx, id); err != nil {
		return apierr.New(404, apierr.CodeNotFound, "no such project", err)
	}
	return nil
}

func (p *Plugins) list(c *fiber.Ctx) error {
	project := c.Params("project")
	if err := p.project(c.UserContext(), project); err != nil {
		return err
	}
	return c.JSON(httpx.NewList(p.h.PluginStatus(project), ""))
}

func (p *Plugins) logs(c *fiber.Ctx) error {
	project, name := c.Params("project"), c.Params("name")
	if err := p.project(c.UserContext(), project); err != nil {
		return err
	}
	n := defaultLogLines
	if s := c.Query("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > maxLogLines {
			return apierr.Validation(apierr.FieldProblem{Field: "limit", Problem: "must be from 1 to " + strconv.Itoa(maxLogLines)})
		}
		n = v
	}
	lines, ok := p.h.PluginLogs(project, name, n)
	if !ok {
		return apierr.New(404, apierr.CodeNotFound, "no such plugin in this project", nil)
	}
	return c.JSON(httpx.NewList(lines, ""))
}
