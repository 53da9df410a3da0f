package driver

import (
	"fmt"
	"reflect"
	"testing"
)

func TestKeepWordsFindsTheErrorAboveAUsageDump(t *testing.T) {
	usage := []string{"Unknown arguments: such-flag, suchFlag", "Usage: gemini [options] [command]"}
	for i := 0; i < 30; i++ {
		usage = append(usage, fmt.Sprintf("--option-%d  does a thing  [boolean]", i))
	}
	got := keepWords(usage)
	if len(got) != exitWordLines+1 || got[0] != "Unknown arguments: such-flag, suchFlag" || got[1] != usage[len(usage)-exitWordLines] {
		t.Fatalf("keepWords = %q", got)
	}
	// An error in the tail needs nothing more; a short pane is kept whole.
	tail := append(append([]string{}, usage...), "Error: no key")
	if got := keepWords(tail); len(got) != exitWordLines || got[len(got)-1] != "Error: no key" {
		t.Fatalf("keepWords with an error at the end = %q", got)
	}
	if short := []string{"a", "b"}; !reflect.DeepEqual(keepWords(short), short) {
		t.Fatal("a short pane was not kept whole")
	}
}
