package fsatomic

import (
	"errors"
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

var commentSeeds = []string{
	"# a seat\nharness = \"sim\" # trailing\n\n  # indented\n[env]\nA = \"1\"\n",
	"a = [\n  # inside an array\n  1,\n  2,\n]\n# last",
	"# crlf\r\na = 1\r\n# end\r\n",
	"# bare cr at the end\r",
	"# bare \r inside\na = 1\n",
	"# control \x01 char\na = 1\n",
	"# bad utf-8 \xff\na = 1\n",
	"s = \"\"\"\n# not a comment\n\"\"\"\n",
	"s = '''\n# not a comment\n'''\n",
	"a = \n# value missing\n",
	"a = [1,\n# unterminated\n",
	"[t]\n# c\nb = 2\n[t]\n",
	"#\n#\n#\nx = 'y'\n# trailing comment\n\n",
	"no comments = 1\n",
}

// FuzzWithoutCommentLines checks that removing whole-line comments changes
// nothing a decode sees: the same values, or an error on the same line with
// the same message.
func FuzzWithoutCommentLines(f *testing.F) {
	for _, s := range commentSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sameDecode(t, src)
	})
}

func TestWithoutCommentLines(t *testing.T) {
	for _, s := range commentSeeds {
		sameDecode(t, s)
	}
	src := []byte("a = 1\n")
	if got := withoutCommentLines(src); &got[0] != &src[0] {
		t.Errorf("source without comments was copied")
	}
	if got := string(withoutCommentLines([]byte("  # c\r\na = 1 # d\n#\n"))); got != "  \r\na = 1 # d\n\n" {
		t.Errorf("got %q", got)
	}
}

func sameDecode(t *testing.T, src string) {
	t.Helper()
	var a, b map[string]any
	_, errA := toml.Decode(src, &a)
	_, errB := toml.Decode(string(withoutCommentLines([]byte(src))), &b)
	if (errA == nil) != (errB == nil) {
		t.Fatalf("%q: error %v, without comments %v", src, errA, errB)
	}
	if errA != nil {
		var pa, pb toml.ParseError
		if errors.As(errA, &pa) != errors.As(errB, &pb) || pa.Position.Line != pb.Position.Line || pa.Message != pb.Message {
			t.Fatalf("%q: error %v, without comments %v", src, errA, errB)
		}
		if !errors.As(errA, &pa) && errA.Error() != errB.Error() {
			t.Fatalf("%q: error %v, without comments %v", src, errA, errB)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%q: decoded %v, without comments %v", src, a, b)
	}
}
