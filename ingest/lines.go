package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads NDJSON one line at a time in bounded memory: a line
// longer than max is skipped (and reported) instead of buffered.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line int // number of the last line read, from 1
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, max+1), max: max}
}

// next returns the next non-blank line (without its line break) and its
// number; tooLong reports a skipped line. The slice is valid until the
// next call. At the end it returns io.EOF.
func (l *lineReader) next() (text []byte, number int, tooLong bool, err error) {
	for {
		text, err = l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.line++
			return nil, l.line, true, l.skipRest()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, false, err
		}
		if len(text) == 0 && err != nil {
			return nil, 0, false, io.EOF
		}
		l.line++
		text = bytes.TrimSpace(text)
		if len(text) > 0 {
			return text, l.line, false, nil
		}
		if err != nil {
			return nil, 0, false, io.EOF
		}
	}
}

func (l *lineReader) skipRest() error {
	for {
		_, err := l.r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}
