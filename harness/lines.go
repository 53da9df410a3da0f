package harness

import (
	"bufio"
	"os"
)

// maxLine bounds one line of a harness's own JSON-lines file: a transcript
// row can carry a whole file the model read, or an API snapshot.
const maxLine = 256 << 20

// Lines calls each for every line of a harness's JSON-lines file (Claude
// Code's transcript, Codex's rollout), numbered from 1, until each answers
// false. The line is only valid during the call. Every adapter that finds a
// turn's evidence in such a file reads it this way.
func Lines(path string, each func(n int, line []byte) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	for n := 1; sc.Scan(); n++ {
		if !each(n, sc.Bytes()) {
			return nil
		}
	}
	return sc.Err()
}
