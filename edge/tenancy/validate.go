package tenancy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
)

// Products are the product scopes a key may carry.
var Products = []string{"email", "files", "forms", "membership", "records"}

type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// unique reports a repeated name within one scope.
func (c *checker) unique(seen map[string]string, name, path, what string) {
	if prev, ok := seen[name]; ok {
		c.add(path, "%s %q repeats %s", what, name, prev)
		return
	}
	seen[name] = path
}

// Validate checks what tenancy owns of the document (orgs, projects, keys) and returns an
// *InvalidError listing every problem. Service.Validate checks the products' sections too.
func (d *Document) Validate() error {
	c := &checker{}
	d.check(c, nil, false)
	if len(c.problems) > 0 {
		return &InvalidError{Problems: c.problems}
	}
	return nil
}

// Validate checks the whole document: what tenancy owns and every registered section; a key no
// section owns is refused.
func (s *Service) Validate(d *Document) error {
	c := &checker{}
	d.check(c, s.sections, true)
	if len(c.problems) > 0 {
		return d.lines(&InvalidError{Problems: c.problems})
	}
	return nil
}

// check validates d; without withSections the sections' keys are not looked at.
func (d *Document) check(c *checker, secs []Section, withSections bool) {
	orgs, projects, keyValues := map[string]string{}, map[string]string{}, map[string]string{}
	for oi, o := range d.Orgs {
		op := fmt.Sprintf("orgs[%d]", oi)
		if !slugRe.MatchString(o.Slug) {
			c.add(op+".slug", "must be 1-63 lower-case letters, digits, - or _, starting with a letter or digit")
		} else {
			c.unique(orgs, o.Slug, op, "org")
		}
		keyNames := map[string]string{}
		for ki, k := range o.Keys {
			c.key(fmt.Sprintf("%s.keys[%d]", op, ki), k, keyNames, keyValues)
		}
		if withSections {
			c.sections(op, OrgLevel, o.Slug, "", o.Sections, secs)
		}
		for pi, p := range o.Projects {
			pp := fmt.Sprintf("%s.projects[%d]", op, pi)
			if !slugRe.MatchString(p.ID) {
				c.add(pp+".id", "must be 1-63 lower-case letters, digits, - or _, starting with a letter or digit")
			} else {
				c.unique(projects, p.ID, pp, "project id")
			}
			names := map[string]string{}
			for ki, k := range p.Keys {
				c.key(fmt.Sprintf("%s.keys[%d]", pp, ki), k, names, keyValues)
			}
			if withSections {
				c.sections(pp, ProjectLevel, o.Slug, p.ID, p.Sections, secs)
			}
		}
	}
}

// sections runs each section's Check on its key of one org or project and refuses the keys no
// section owns.
func (c *checker) sections(path string, level Level, org, project string, raw map[string]json.RawMessage, secs []Section) {
	owned := map[string]bool{}
	for _, sec := range secs {
		if sec.Level() != level {
			continue
		}
		owned[sec.Name()] = true
		sec.Check(&Check{Path: path + "." + sec.Name(), Org: org, Project: project, siblings: raw, problems: &c.problems}, raw[sec.Name()])
	}
	var unknown []string
	for k := range raw {
		if !owned[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		c.add(path+"."+k, "unknown key")
	}
}

func (c *checker) key(path string, k KeySpec, names, values map[string]string) {
	if !nameRe.MatchString(k.Name) {
		c.add(path+".name", "must be 1-63 letters, digits, - or _")
	} else {
		c.unique(names, k.Name, path, "key name")
	}
	test := false
	if k.Value != "" {
		kind, isTest, err := apikey.KindOf(k.Value)
		switch {
		case err != nil && !strings.HasPrefix(k.Value, apikey.PrefixLive) && !strings.HasPrefix(k.Value, apikey.PrefixTest) && !strings.HasPrefix(k.Value, apikey.PrefixSecret):
			c.add(path, "value must start with pk_live_, pk_test_ or sk_live_")
		case err != nil:
			c.add(path, "value must have at least 4 letters, digits, - or _ after its prefix")
		default:
			test = isTest
			if k.Kind != "" && k.Kind != string(kind) && !(isTest && k.Kind == "test") {
				c.add(path+".kind", "is %q but the value's prefix makes it %s", k.Kind, kind)
			}
			c.unique(values, apikey.Hash(k.Value), path, "key value")
		}
	} else {
		switch k.Kind {
		case "publishable", "secret":
		case "test":
			test = true
		default:
			c.add(path+".kind", "a key without value needs kind publishable, secret or test")
		}
	}
	if len(k.Products) == 0 {
		c.add(path+".products", "must name at least one of %s", strings.Join(Products, ", "))
	}
	for i, p := range k.Products {
		if !contains(Products, p) {
			c.add(fmt.Sprintf("%s.products[%d]", path, i), "%q is not one of %s", p, strings.Join(Products, ", "))
		} else if test && p != "membership" {
			c.add(fmt.Sprintf("%s.products[%d]", path, i), "pk_test_ keys are for the membership embed only")
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
