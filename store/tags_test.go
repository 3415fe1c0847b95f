package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestExportedTypesCarryNoJSONTags: the API's answers and the command line's output are
// rendered by view types where they are printed, so no exported store type may shape JSON.
// Unexported types may, for the JSON a column stores.
func TestExportedTypesCarryNoJSONTags(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Name.IsExported() {
					checkNoJSONTags(t, fset, ts.Name.Name, ts.Type)
				}
			}
		}
	}
}

// checkNoJSONTags reports every field with a json tag in the type expression, nested structs
// included.
func checkNoJSONTags(t *testing.T, fset *token.FileSet, typeName string, expr ast.Expr) {
	ast.Inspect(expr, func(n ast.Node) bool {
		f, ok := n.(*ast.Field)
		if !ok || f.Tag == nil {
			return true
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err != nil {
			t.Fatalf("%s: %v", fset.Position(f.Pos()), err)
		}
		if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
			t.Errorf("%s: %s has a field tagged %s; render it with a view type where it is printed",
				fset.Position(f.Pos()), typeName, tag)
		}
		return true
	})
}
