// Command go-client is the contract example of docs/api.md: it reads a form's definition
// (GET /forms/forms/{slug}, operation getForm) through a client that oapi-codegen generated
// from the gateway's own GET /openapi.json into ./gatehouse (not committed: the example
// generates it first).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	"example.com/gatehouse-go-client/gatehouse"
)

func main() {
	server := flag.String("server", "http://localhost:8787", "the gateway's base URL")
	key := flag.String("key", "", "a publishable key with the forms product")
	slug := flag.String("form", "contact", "the form's slug")
	flag.Parse()

	client, err := gatehouse.NewClientWithResponses(*server, gatehouse.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-API-Key", *key)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.GetFormWithResponse(context.Background(), *slug)
	if err != nil {
		log.Fatal(err)
	}
	if res.JSON200 == nil {
		log.Fatalf("getForm answered %d: %s", res.StatusCode(), res.Body)
	}
	form := res.JSON200
	fmt.Printf("form %s (%q): %d fields\n", form.Slug, form.Title, len(form.Fields))
	for _, f := range form.Fields {
		fmt.Printf("  %s: %s\n", f.Name, f.Type)
	}
}
