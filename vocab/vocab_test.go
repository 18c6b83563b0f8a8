package vocab

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNamesWrittenOnce: a metric kind's or a record type's name is a Go
// string literal in one non-test file of the module, this package's
// (bench/, the clients under sdk/ and testdata/ are exempt; SQL text is
// never the bare name). "score" is also a field's name elsewhere (the
// calls query's score filter, an evaluator's score), where it names no
// record type: it must be in vocab, and may be elsewhere too.
func TestNamesWrittenOnce(t *testing.T) {
	alsoAField := map[string]bool{string(TypeScore): true}
	names := map[string][]string{}
	for _, k := range Kinds {
		names[string(k.Name)] = nil
	}
	for _, r := range SourceTypes {
		names[string(r)] = nil
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "bench", "sdk", "testdata", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil {
				if _, tracked := names[v]; tracked {
					names[v] = append(names[v], path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(Kinds)+len(SourceTypes) {
		t.Fatalf("a kind and a record type share a name: %v", names)
	}
	for name, files := range names {
		if alsoAField[name] {
			files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(filepath.Dir(f)) != "vocab" })
		}
		if len(files) != 1 || filepath.Base(filepath.Dir(files[0])) != "vocab" {
			t.Errorf("%q is a literal in %v; want it once, in vocab (use the vocab constant)", name, files)
		}
	}
}

// TestModelCallFieldsCoverTheStruct: every field of ModelCall has exactly
// one entry, named as its JSON and column name, whose accessors read that
// field, so the table and the struct cannot drift.
func TestModelCallFieldsCoverTheStruct(t *testing.T) {
	typ := reflect.TypeFor[ModelCall]()
	if typ.NumField() != len(ModelCallFields) {
		t.Fatalf("ModelCall has %d fields, ModelCallFields %d entries", typ.NumField(), len(ModelCallFields))
	}
	for i := range typ.NumField() {
		sf := typ.Field(i)
		name := strings.Split(sf.Tag.Get("json"), ",")[0]
		if col := strings.TrimPrefix(sf.Tag.Get("gorm"), "column:"); col != name {
			t.Errorf("%s: column %q, JSON name %q", sf.Name, col, name)
		}
		f, ok := ModelCallField(name)
		if !ok {
			t.Errorf("%s (%s) has no entry", sf.Name, name)
			continue
		}
		var m ModelCall
		if f.Set(&m) || f.Value(&m) == nil {
			t.Errorf("%s: Set on an empty ModelCall, or Value not a typed pointer", name)
		}
		// Set the struct field alone: the entry must see it.
		v := reflect.New(sf.Type.Elem())
		reflect.ValueOf(&m).Elem().Field(i).Set(v)
		if !f.Set(&m) || reflect.ValueOf(f.Value(&m)).Pointer() != v.Pointer() {
			t.Errorf("entry %s does not read field %s", name, sf.Name)
		}
	}
}

func TestKindsAreComplete(t *testing.T) {
	for _, s := range Kinds {
		agg := s.Name.AggregatedAs().Spec()
		if agg.AggregateAs != "" || !agg.Name.Valid() {
			t.Errorf("%s aggregates as %s, which is not a kind with its own Select and Reduce", s.Name, s.AggregateAs)
		}
		if (s.Compare == ByUser) == (s.Test != "") {
			t.Errorf("%s: a kind compared on per-user values takes method_default (no Test); the others have their one Test", s.Name)
		}
	}
}

func TestPerUser(t *testing.T) {
	for _, c := range []struct {
		r          Reduce
		sum        float64
		count      int64
		want       float64
		wantAbsent bool
	}{
		{ReduceAny, 0, 0, 0, false}, {ReduceAny, 0, 2, 1, false},
		{ReduceCount, 9, 3, 3, false},
		{ReduceAverage, 9, 3, 3, false}, {ReduceAverage, 0, 0, 0, true},
		{ReduceSum, 9, 3, 9, false}, {ReduceSum, 0, 0, 0, false},
	} {
		v, ok := c.r.PerUser(c.sum, c.count)
		if v != c.want || ok == c.wantAbsent {
			t.Errorf("%v.PerUser(%v, %d) = %v, %v; want %v, %v", c.r, c.sum, c.count, v, ok, c.want, !c.wantAbsent)
		}
	}
}

func TestJoinOr(t *testing.T) {
	if got := JoinOr(RecordTypes, "%q"); got != `"exposure", "model_call" or "business_event"` {
		t.Errorf("JoinOr = %s", got)
	}
}
