// Command gen writes testdata/conformance/scenario.json from the bucketing
// package. Run it with `go generate ./bucketing`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/expd/expd/testdata/conformance/scenario"
)

func main() {
	out := flag.String("o", "testdata/conformance/scenario.json", "path of the scenario file to write")
	flag.Parse()
	f, err := scenario.Build()
	if err == nil {
		var raw []byte
		if raw, err = f.Marshal(); err == nil {
			err = os.WriteFile(*out, raw, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
