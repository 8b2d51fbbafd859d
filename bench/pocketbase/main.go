// Command pocketbase is PocketBase v0.40.4 as its own documentation builds it, kept here only
// as the reference the benchmarks measure Gatehouse against in the same run (records mixes,
// batch import, thumbs). It is a separate Go module so the gateway never depends on it.
package main

import (
	"log"

	"github.com/pocketbase/pocketbase"
)

func main() {
	app := pocketbase.New()
	if err := app.Start(); err != nil {
		log.Fatal(err)
	}
}
