// Package layering_test holds the import-direction check: the layer table in
// docs/architecture.md against the import graph `go list` reports, so the
// package map a reader trusts cannot drift from the code.
package layering_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/pantty/pantty/"

// adapters may be imported only by adapterUsers (and by tests, which go list
// does not show in Imports): harness/all is the one list every program
// registers, and cmd/pantty runs the simulator's program (`pantty __sim`).
var (
	adapters     = []string{"harness/sim", "harness/claudecode", "harness/codex", "harness/gemini"}
	adapterUsers = []string{"harness/all", "cmd/pantty"}
)

// driver is the seat's work loop; only the binary's hidden `__drive` verb runs
// it. Readers (telemetry, gates, recover, feed, measure) see the seat through
// its records and must not import the loop that writes them.
const driver = "seat/driver"

var driverUsers = []string{"cmd/pantty"}

// lifecycle is the package that starts, stops and owns seats. readers derive
// what they say from the records in seat/state and may not import it (nor the
// driver): a reader that could call seat.Start or take the owner lock would be
// one edit away from changing what it reports on.
const lifecycle = "seat"

var readers = []string{"seat/telemetry", "seat/feed", "seat/gates"}

func TestImportsRunDownTheLayers(t *testing.T) {
	root := moduleRoot(t)
	layer := readLayers(t, filepath.Join(root, "docs", "architecture.md"))
	graph := importGraph(t, root)
	for pkg, imports := range graph {
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer in docs/architecture.md (Layers): add it", pkg)
			continue
		}
		for _, imp := range imports {
			il, ok := layer[imp]
			if !ok {
				continue // reported as its own package above
			}
			if il >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run downward only", pkg, l, imp, il)
			}
			if contains(adapters, imp) && !contains(adapterUsers, pkg) {
				t.Errorf("%s imports the adapter %s: only %v may (adapters register through harness/all)", pkg, imp, adapterUsers)
			}
			if imp == lifecycle && contains(readers, pkg) {
				t.Errorf("%s imports the lifecycle package %s: readers read the seat's records (seat/state), never start, stop or own a seat", pkg, imp)
			}
			if imp == driver && !contains(driverUsers, pkg) {
				t.Errorf("%s imports the driver %s: only %v may (readers read the seat's records, never the loop)", pkg, imp, driverUsers)
			}
		}
	}
	for pkg := range layer {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("docs/architecture.md names %s, which is not a package of the module", pkg)
		}
	}
}

// readLayers parses the table between the layers markers: layer number, then
// backquoted package paths.
func readLayers(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| (\d+) \| (.*) \|$`)
	pkg := regexp.MustCompile("`([^`]+)`")
	layer := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "<!-- layers:begin -->"):
			in = true
		case strings.Contains(line, "<!-- layers:end -->"):
			in = false
		case in:
			m := row.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
				if prev, dup := layer[p[1]]; dup {
					t.Errorf("%s is in layers %d and %d", p[1], prev, n)
				}
				layer[p[1]] = n
			}
		}
	}
	if len(layer) == 0 {
		t.Fatalf("no layer table between the markers in %s", path)
	}
	return layer
}

// importGraph maps every package of the module (relative path) to the module
// packages it imports, tests left out.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		if pkg == f[0] || strings.HasPrefix(pkg, "internal/layering") {
			continue
		}
		graph[pkg] = []string{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				graph[pkg] = append(graph[pkg], rel)
			}
		}
	}
	return graph
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
