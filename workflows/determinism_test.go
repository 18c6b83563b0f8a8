package workflows_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports are the I/O packages workflow code must not reach
// (prefixes: net/http/httptest and gorm.io/driver/... are I/O too).
var forbiddenImports = []string{"gorm.io/", "database/sql", "net/http"}

// forbiddenTimeFuncs read or wait on the wall clock; workflow code uses
// workflow.Now, workflow.Sleep and workflow.NewTimer instead.
var forbiddenTimeFuncs = []string{"Now", "Sleep", "After", "Since"}

// Every non-test file of workflows/ stays deterministic: no database or
// HTTP package, no wall clock (architecture §2). The client side of the
// workflows (starts, schedules, reconciliation) is in workflowclient/.
func TestWorkflowCodeIsDeterministic(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Clean(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range nondeterminism(t, name, src) {
			t.Error(v)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no workflow files found")
	}
}

// The check itself finds each kind of violation, under an alias too.
func TestNondeterminismCheckCatchesViolations(t *testing.T) {
	src := `package workflows

import (
	"database/sql"
	clock "time"
	_ "gorm.io/gorm"
	"net/http/httptest"
)

var now = clock.Now // a function value is a call waiting to happen

func bad(db *sql.DB) {
	clock.Sleep(clock.Since(now()))
	<-clock.After(clock.Second)
	_ = httptest.NewServer
}
`
	got := nondeterminism(t, "bad.go", []byte(src))
	want := []string{
		`bad.go:4:2: imports "database/sql"`,
		`bad.go:6:2: imports "gorm.io/gorm"`,
		`bad.go:7:2: imports "net/http/httptest"`,
		`bad.go:10:11: uses time.Now`,
		`bad.go:13:2: uses time.Sleep`,
		`bad.go:13:14: uses time.Since`,
		`bad.go:14:4: uses time.After`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	clean := "package workflows\n\nimport \"time\"\n\nconst d = 5 * time.Minute\n\nfunc f(t time.Time) time.Time { return t.Add(d) }\n"
	if got := nondeterminism(t, "clean.go", []byte(clean)); len(got) != 0 {
		t.Fatalf("clean file flagged: %v", got)
	}
}

// nondeterminism lists a file's forbidden imports and its uses (calls or
// function values) of the wall-clock functions of package time.
func nondeterminism(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	timeName := ""
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range forbiddenImports {
			if strings.HasPrefix(path, bad) {
				found = append(found, fmt.Sprintf("%s: imports %q", fset.Position(imp.Pos()), path))
			}
		}
		if path == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "." {
		found = append(found, fmt.Sprintf("%s: dot-imports time", name))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == timeName && slices.Contains(forbiddenTimeFuncs, sel.Sel.Name) {
			found = append(found, fmt.Sprintf("%s: uses time.%s", fset.Position(sel.Pos()), sel.Sel.Name))
		}
		return true
	})
	return found
}
