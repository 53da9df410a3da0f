// Package doccite checks what the project's own files cite — a repository path,
// a declaration in a Go file, a section of a docs/*.md file — against the
// repository, and refuses citations of what does not ship (the team's design
// brief). The docs and the gates registry are read by users who have only the
// repository: a citation they cannot follow is a defect, and a move that leaves
// one behind should fail a test, not a reader.
package doccite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// unshipped are citations of documents that are not in the repository.
var unshipped = []*regexp.Regexp{
	regexp.MustCompile(`\bDESIGN\b`),
	regexp.MustCompile(`(?i)design brief`),
	regexp.MustCompile(`\.\./shared\b`),
}

var (
	// goDecl is a Go file followed by the declaration it cites:
	// "harness/codex/e2e_test.go TestCancelSlowTurn", "seat/limits.go (`FileKinds`)".
	goDecl = regexp.MustCompile("([A-Za-z0-9_./-]+\\.go)`?,? \\(?`?([A-Z][A-Za-z0-9_]*)(?:\\.([A-Z][A-Za-z0-9_]*))?")
	// docSection is a docs file followed by a section title: `docs/x.md,
	// "Title"`, `docs/x.md ("Title")`, `docs/x.md (Title)`, `docs/x.md#anchor`.
	docSection = regexp.MustCompile(`(docs/[a-z0-9-]+\.md)(?:#([a-z0-9-]+)|,? \(?"([^"]+)"|,? \(([A-Z][^()"]*)\))`)
	// A document's named places: its headings, a paragraph's bold lead
	// ("**The drop directory.**") and a table row's first cell.
	heading = regexp.MustCompile(`(?m)^(?:#{1,6} +(.+?) *|\*\*([^*]+?)\.?\*\*.*|\| *([^|]+?) *\|.*)$`)
	// localSection is a section of the same document: `"Limits" below`,
	// `(below, "The inbox")`, `see "Timers"`.
	localSection = regexp.MustCompile(`"([^"]{2,80})" (?:below|above)|\((?:below|above), "([^"]+)"\)|\bsee "([^"]+)"`)
	// testName is a test, benchmark or fuzz target named anywhere in the text
	// (a subtest by its parent: TestE2E/Outage/Credential).
	testName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)
	testDecl = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
)

// Checker resolves citations against one repository root. It caches what it
// parsed.
type Checker struct {
	root  string
	top   *regexp.Regexp // a path starting at a top-level directory of the root
	decls map[string]map[string]bool
	heads map[string][]string
	state map[string]bool // top-level names that are also seat state directories
	tests map[string]bool // every test, benchmark and fuzz target of the repository (read once)
}

// New returns a Checker for the repository at root; the top-level directories
// it finds there are the ones a citation may start with. state names those
// that are also the name of a directory in a seat (`handoff/`: the package, and
// the seat's handoff/current): under them only a .go file is a citation of the
// repository.
func New(root string, state ...string) (*Checker, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, regexp.QuoteMeta(e.Name()))
		}
	}
	// Not after a character that would make it part of a longer path
	// ($PANTTY_HOME/recover/…, ~/.cache/…, <seat>/harness/…, github.com/…/cmd/…).
	top := regexp.MustCompile(`(?:^|[^A-Za-z0-9_./~$<>@-])((?:` + strings.Join(dirs, "|") + `)/[A-Za-z0-9_./<>*…{}-]*)`)
	c := &Checker{root: root, top: top, decls: map[string]map[string]bool{}, heads: map[string][]string{}, state: map[string]bool{}}
	for _, s := range state {
		c.state[s] = true
	}
	return c, nil
}

// Check returns one line per citation in text that does not resolve, each
// prefixed with name and the line number, and the number of citations it
// found (so a caller can tell "all resolve" from "none recognised").
func (c *Checker) Check(name, text string) (bad []string, cited int) {
	for i, line := range strings.Split(text, "\n") {
		where := name + ":" + strconv.Itoa(i+1) + ": "
		for _, re := range unshipped {
			if m := re.FindString(line); m != "" {
				cited++
				bad = append(bad, where+"cites "+strconv.Quote(m)+", which does not ship with the project: cite the file, doc section or code that holds the fact, or restate it")
			}
		}
		for _, m := range c.top.FindAllStringSubmatch(line, -1) {
			cited++
			if msg := c.path(m[1]); msg != "" {
				bad = append(bad, where+msg)
			}
		}
		for _, m := range goDecl.FindAllStringSubmatch(line, -1) {
			cited++
			if msg := c.decl(m[1], m[2], m[3]); msg != "" {
				bad = append(bad, where+msg)
			}
		}
		for _, name := range testName.FindAllString(line, -1) {
			cited++
			if !c.test(name) {
				bad = append(bad, where+"names "+name+", which no _test.go file of the repository declares")
			}
		}
		for _, m := range localSection.FindAllStringSubmatch(line, -1) {
			if !strings.HasSuffix(name, ".md") {
				break
			}
			cited++
			if msg := c.section(name, "", m[1]+m[2]+m[3]); msg != "" {
				bad = append(bad, where+msg)
			}
		}
		for _, m := range docSection.FindAllStringSubmatch(line, -1) {
			cited++
			if msg := c.section(m[1], m[2], m[3]+m[4]); msg != "" {
				bad = append(bad, where+msg)
			}
		}
	}
	return bad, cited
}

// path reports a repository path that does not exist. A path with a
// placeholder (`<harness>`, `*`, `…`) is checked up to the directory before it.
func (c *Checker) path(p string) string {
	p = strings.TrimRight(p, ".")
	// A seat's state file (handoff/current, handoff/notes/<ns>.md,
	// harness/gemini-compress.json) under a directory the seat and the
	// repository both have: its first name below is not the repository's.
	// Below one that is (harness/gemini/…), the path is checked.
	if first, rest, _ := strings.Cut(p, "/"); c.state[first] && !strings.HasSuffix(p, ".go") {
		second, _, _ := strings.Cut(rest, "/")
		if _, err := os.Stat(filepath.Join(c.root, first, second)); err != nil || second == "" {
			return ""
		}
	}
	check := p
	if i := strings.IndexAny(p, "<*…{"); i >= 0 {
		check = p[:strings.LastIndex(p[:i], "/")+1]
	}
	if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(check))); err != nil {
		return "cites " + p + ", which is not in the repository"
	}
	return ""
}

// decl reports a Go file that does not declare the name cited after it
// (`Seat.SessionFile`: the method, declared in that file). A path that is not
// in the repository is reported by path, not here.
func (c *Checker) decl(file, name, member string) string {
	if !c.top.MatchString(" " + file) {
		return "" // not a repository path (a file the harness writes, say)
	}
	full := filepath.Join(c.root, filepath.FromSlash(file))
	d, ok := c.decls[full]
	if !ok {
		d = map[string]bool{}
		f, err := parser.ParseFile(token.NewFileSet(), full, nil, parser.SkipObjectResolution)
		if err != nil {
			c.decls[full] = nil
			return "" // missing: reported by path
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				d[decl.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						d[spec.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d[n.Name] = true
						}
					}
				}
			}
		}
		c.decls[full] = d
	}
	if member != "" {
		name = member
	}
	if d != nil && !d[name] {
		return "cites " + file + " " + name + ": that file declares no " + name
	}
	return ""
}

// test says whether the repository declares the test function name.
func (c *Checker) test(name string) bool {
	if c.tests == nil {
		c.tests = map[string]bool{}
		filepath.WalkDir(c.root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != c.root {
				return filepath.SkipDir
			}
			if strings.HasSuffix(p, "_test.go") {
				if data, err := os.ReadFile(p); err == nil {
					for _, m := range testDecl.FindAllSubmatch(data, -1) {
						c.tests[string(m[1])] = true
					}
				}
			}
			return nil
		})
	}
	return c.tests[name]
}

// section reports a docs section (by GitHub anchor or by title) that the
// document does not have. A title matches a named place it equals, or one
// it begins before a subtitle, ignoring case and backquotes.
func (c *Checker) section(doc, anchor, title string) string {
	heads, ok := c.heads[doc]
	if !ok {
		data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(doc)))
		if err != nil {
			return "" // missing: reported by path
		}
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			heads = append(heads, normal(m[1]+m[2]+m[3]))
		}
		c.heads[doc] = heads
	}
	for _, h := range heads {
		if anchor != "" && Anchor(h) == anchor {
			return ""
		}
		if t := normal(title); anchor == "" && begins(h, t) {
			return ""
		}
	}
	if anchor != "" {
		return "cites " + doc + "#" + anchor + ": no such section"
	}
	return "cites " + doc + " \"" + title + "\": no such section"
}

// begins says whether title is heading, or heading before its subtitle
// ("Limits" names "Limits: hostile files in the state root", "Failure
// classes" names "Failure classes (what recover does)").
func begins(heading, title string) bool {
	rest, ok := strings.CutPrefix(heading, title)
	return ok && (rest == "" || strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, " —"))
}

func normal(s string) string {
	return strings.ToLower(strings.TrimSpace(strings.ReplaceAll(s, "`", "")))
}

// Anchor is the anchor GitHub gives a heading: lower case, spaces to hyphens,
// punctuation other than hyphens and underscores dropped.
func Anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
