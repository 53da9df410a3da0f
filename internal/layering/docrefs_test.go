package layering_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docPackages maps the package names the documents write (`seat.Config`,
// `guard.Prefix`) to the module directories that hold them.
var docPackages = map[string]string{
	"seat": "seat", "harness": "harness", "driver": "seat/driver", "telemetry": "seat/telemetry", "gates": "seat/gates",
	"seattest": "seat/seattest", "standinkit": "harness/standinkit", "recover": "recover",
	"config": "internal/config", "guard": "internal/guard", "inbox": "internal/inbox",
	"machine": "internal/machine", "fsatomic": "internal/fsatomic", "fsafe": "internal/fsafe",
	"termtext": "internal/termtext", "tmux": "tmux", "handoff": "handoff",
}

// docRef is `pkg.Name` or `pkg.Name.Member` in backquotes.
var docRef = regexp.MustCompile("`(" + strings.Join(slices.Sorted(maps.Keys(docPackages)), "|") + `)\.([A-Z][A-Za-z0-9]*)(?:\.([A-Z][A-Za-z0-9]*))?`)

// TestDocumentsNameIdentifiersThatExist: every `pkg.Name` (and
// `pkg.Name.Member`) the documents write in backquotes names an exported
// declaration of that package (and a field or method declared in it), so a
// move or a rename cannot leave the documents pointing at code that is gone
// (a reader followed `seat.ValidateMessage` into a package that no longer had
// it).
func TestDocumentsNameIdentifiersThatExist(t *testing.T) {
	root := moduleRoot(t)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	decls := map[string]declared{}
	refs := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range docRef.FindAllStringSubmatch(line, -1) {
				refs++
				pkg, name, member := m[1], m[2], m[3]
				d, ok := decls[pkg]
				if !ok {
					d = readDeclared(t, filepath.Join(root, docPackages[pkg]))
					decls[pkg] = d
				}
				where := filepath.Base(doc) + ":" + strconv.Itoa(i+1)
				switch {
				case !d.top[name] && !d.method[name]:
					t.Errorf("%s names %s.%s: %s declares no %s", where, pkg, name, docPackages[pkg], name)
				case member != "" && !d.member[member]:
					t.Errorf("%s names %s.%s.%s: %s declares no field or method %s", where, pkg, name, member, docPackages[pkg], member)
				}
			}
		}
	}
	if refs < 50 {
		t.Fatalf("found only %d references in the documents: the pattern no longer matches them", refs)
	}
}

// declared holds a package's top-level names, its methods (`seat.Acquire`
// names Seat's method), and the names of the fields and methods declared in
// it (`harness.Capabilities.InputReady`).
type declared struct{ top, method, member map[string]bool }

func readDeclared(t *testing.T, dir string) declared {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	d := declared{top: map[string]bool{}, method: map[string]bool{}, member: map[string]bool{}}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv != nil {
					d.method[decl.Name.Name], d.member[decl.Name.Name] = true, true
				} else {
					d.top[decl.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						d.top[spec.Name.Name] = true
						ast.Inspect(spec.Type, func(n ast.Node) bool {
							if field, ok := n.(*ast.Field); ok {
								for _, name := range field.Names {
									d.member[name.Name] = true
								}
								if len(field.Names) == 0 { // embedded: its promoted names are the embedded package's
									d.member[embeddedName(field.Type)] = true
								}
							}
							return true
						})
					case *ast.ValueSpec:
						for _, name := range spec.Names {
							d.top[name.Name] = true
						}
					}
				}
			}
		}
	}
	return d
}

func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
