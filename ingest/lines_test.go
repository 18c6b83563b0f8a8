package ingest

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReaderSkipsBlankAndOversizedLines(t *testing.T) {
	in := "a\r\n\n   \n" + strings.Repeat("x", 40) + "\nb\n" + strings.Repeat("y", 100) + "\nlast"
	lr := newLineReader(strings.NewReader(in), 16)
	type line struct {
		text    string
		number  int
		tooLong bool
	}
	var got []line
	for {
		text, n, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line{string(text), n, tooLong})
	}
	want := []line{{"a", 1, false}, {"", 4, true}, {"b", 5, false}, {"", 6, true}, {"last", 7, false}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
