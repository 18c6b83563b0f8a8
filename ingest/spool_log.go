package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tidwall/wal"

	"github.com/expd/expd/scores"
)

// spoolFormat is the first byte of every spool entry: a later format
// gets a new number, and a process that does not know it refuses the
// directory instead of misreading it. Entries are written in format 2
// (spool_codec.go); format 1 (gob) is still read, so a directory left by
// an older expd replays.
const (
	spoolFormatGob    byte = 1
	spoolFormat       byte = 2
	spoolHeaderLength      = 5 // format byte, CRC-32
)

// spoolEntry is one group's new rows, as the spool's log holds them.
type spoolEntry struct {
	At     time.Time // when it was written: the backlog's age
	Events []EventRow
	Scores []scores.Row
}

func (e *spoolEntry) rows() int { return len(e.Events) + len(e.Scores) }

// errTornEntry is an entry whose checksum does not match: written in
// part when the process or the host stopped (never acknowledged), or
// damaged on disk.
var errTornEntry = errors.New("spool entry checksum mismatch")

// encodeEntry is e as a log entry: format byte, CRC-32 of the rest,
// then the payload. tidwall/wal frames entries by length alone, so the
// checksum is what tells a torn or damaged entry from a whole one.
func encodeEntry(e *spoolEntry) []byte {
	b := appendEntry([]byte{spoolFormat, 0, 0, 0, 0}, e)
	return sealEntry(b)
}

// sealEntry writes the checksum of b's payload into its header.
func sealEntry(b []byte) []byte {
	binary.BigEndian.PutUint32(b[1:spoolHeaderLength], crc32.ChecksumIEEE(b[spoolHeaderLength:]))
	return b
}

func decodeEntry(b []byte) (*spoolEntry, error) {
	if len(b) < spoolHeaderLength {
		return nil, errTornEntry
	}
	if b[0] != spoolFormat && b[0] != spoolFormatGob {
		return nil, fmt.Errorf("spool entry of format %d, this expd reads formats %d and %d", b[0], spoolFormatGob, spoolFormat)
	}
	if binary.BigEndian.Uint32(b[1:spoolHeaderLength]) != crc32.ChecksumIEEE(b[spoolHeaderLength:]) {
		return nil, errTornEntry
	}
	if b[0] == spoolFormat {
		return readEntry(b[spoolHeaderLength:])
	}
	var e spoolEntry
	if err := gob.NewDecoder(bytes.NewReader(b[spoolHeaderLength:])).Decode(&e); err != nil {
		return nil, fmt.Errorf("decode spool entry: %w", err)
	}
	return &e, nil
}

// openLog opens the spool's log in dir. tidwall/wal refuses a log whose
// last segment ends in a partial entry (ErrCorrupt: a write cut short
// by a crash, never fsync'd, so never acknowledged); that tail is cut
// off and the log opened again.
func openLog(dir string) (*wal.Log, error) {
	opts := func() *wal.Options { return &wal.Options{AllowEmpty: true, DirPerms: 0o700, FilePerms: 0o600} }
	l, err := wal.Open(dir, opts())
	if !errors.Is(err, wal.ErrCorrupt) {
		return l, err
	}
	cut, rerr := cutTornTail(dir)
	if rerr != nil {
		return nil, fmt.Errorf("open spool log %s: %w (repair: %v)", dir, err, rerr)
	}
	if !cut {
		return nil, fmt.Errorf("open spool log %s: %w", dir, err)
	}
	return wal.Open(dir, opts())
}

// cutTornTail truncates dir's last segment after its last whole entry
// (tidwall/wal's binary framing: uvarint length, then the data) and
// tells whether it cut anything.
func cutTornTail(dir string) (bool, error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	var segments []string
	for _, n := range names {
		if len(n.Name()) == 20 && !n.IsDir() {
			segments = append(segments, n.Name())
		}
	}
	if len(segments) == 0 {
		return false, nil
	}
	slices.Sort(segments)
	path := filepath.Join(dir, segments[len(segments)-1])
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	pos := 0
	for pos < len(data) {
		size, n := binary.Uvarint(data[pos:])
		if n <= 0 || uint64(len(data)-pos-n) < size {
			break
		}
		pos += n + int(size)
	}
	if pos == len(data) {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := f.Truncate(int64(pos)); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	slog.Warn("ingest spool: cut a partial entry off the log's tail (a write cut short, never acknowledged)",
		"segment", path, "bytes", len(data)-pos)
	return true, nil
}

// readEntries decodes the log's entries from first to last, calling fn
// on each. A last entry that fails its checksum is dropped (torn: never
// acknowledged); one before it is damage the spool cannot repair, and
// opening fails naming it.
func readEntries(l *wal.Log, fn func(index uint64, e *spoolEntry, size int)) (first, last uint64, err error) {
	if first, err = l.FirstIndex(); err != nil {
		return 0, 0, err
	}
	if last, err = l.LastIndex(); err != nil {
		return 0, 0, err
	}
	for i := first; i <= last; i++ {
		b, err := l.Read(i)
		if err != nil {
			return 0, 0, fmt.Errorf("read spool entry %d: %w", i, err)
		}
		e, err := decodeEntry(b)
		if errors.Is(err, errTornEntry) && i == last {
			slog.Warn("ingest spool: dropped the log's last entry, whose checksum does not match (a write cut short, never acknowledged)", "entry", i)
			if err := l.TruncateBack(i - 1); err != nil {
				return 0, 0, fmt.Errorf("drop torn spool entry %d: %w", i, err)
			}
			return first, i - 1, nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("spool entry %d of %d..%d: %w (the spool directory is damaged: move it aside to start; its entries are not shipped)", i, first, last, err)
		}
		fn(i, e, len(b))
	}
	return first, last, nil
}
