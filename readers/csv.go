package readers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"

	"github.com/addrclean/addrclean/record"
)

// defaultMaxRecordSize is far above any real record (Excel caps a cell at
// 32,767 characters) and small enough to keep memory flat.
const defaultMaxRecordSize = 16 << 20

// sampleSize is how much of a CSV input is looked at to detect the delimiter:
// enough for a header and a few rows of even a wide export.
const sampleSize = 64 << 10

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
	zipMagic   = []byte("PK\x03\x04")
)

// EncodingError reports a CSV cell that is not valid text in the encoding the
// input is read with.
type EncodingError struct {
	Name     string // input name
	Line     int    // physical line of the cell
	Column   int    // 1-based cell (field) number
	Encoding string
}

func (e *EncodingError) Error() string {
	return fmt.Sprintf("%s: line %d, cell %d: not valid %s text; if the file was saved by Excel on Windows, try --encoding windows-1252",
		e.Name, e.Line, e.Column, e.Encoding)
}

// CSVReader streams the records of delimited text. It implements Reader,
// Describer and ProgressReporter.
type CSVReader struct {
	log       zerolog.Logger
	name      string
	closer    io.Closer
	count     *countingReader
	total     int64
	cr        *csv.Reader
	guard     *recordGuard
	endLine   int // last line of the last record read
	header    []string
	info      Info
	checkUTF8 bool
	num       int
	closed    bool
}

var (
	_ Reader           = (*CSVReader)(nil)
	_ Describer        = (*CSVReader)(nil)
	_ ProgressReporter = (*CSVReader)(nil)
)

func openCSV(ctx context.Context, path string, opts Options, defaultDelim rune) (*CSVReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	if opts.Delimiter == 0 {
		opts.Delimiter = defaultDelim
	}
	r, err := NewCSV(ctx, path, f, sizeOf(f), opts)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewCSV reads delimited text from src, named name in messages; size is the
// input's length in bytes for Progress, or -1 when unknown. It reads the
// header before returning. Closing the CSVReader does not close src.
func NewCSV(ctx context.Context, name string, src io.Reader, size int64, opts Options) (*CSVReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	enc, err := record.NormaliseEncoding(opts.Encoding)
	if err != nil {
		return nil, err
	}
	if opts.Delimiter != 0 && !record.ValidDelimiter(opts.Delimiter) {
		return nil, fmt.Errorf("invalid delimiter %q: use one character other than a quote, CR or LF", opts.Delimiter)
	}
	cnt := &countingReader{r: src}
	br := bufio.NewReaderSize(cnt, sampleSize)
	sample, err := br.Peek(sampleSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%s: read: %w", name, err)
	}
	complete := err != nil && errors.Is(err, io.EOF)
	hadBOM := bytes.HasPrefix(sample, bomUTF8)
	switch {
	case hadBOM:
		_, _ = br.Discard(len(bomUTF8))
		sample = sample[len(bomUTF8):]
	case bytes.HasPrefix(sample, bomUTF16LE), bytes.HasPrefix(sample, bomUTF16BE):
		return nil, fmt.Errorf("%s: the file is UTF-16 text; save it as \"CSV UTF-8\" instead", name)
	case looksUTF16(sample):
		return nil, fmt.Errorf("%s: the file is UTF-16 text without a byte-order mark (every other byte is NUL); save it as \"CSV UTF-8\" instead", name)
	case bytes.HasPrefix(sample, zipMagic):
		return nil, fmt.Errorf("%s: the file is a zip archive (an XLSX workbook?), not delimited text; give it the .xlsx extension", name)
	}

	var text io.Reader = br
	// Excel for Mac writes "CSV (Macintosh)" with bare CR line ends, which
	// encoding/csv would read as one endless record.
	if bytes.IndexByte(sample, '\r') >= 0 && bytes.IndexByte(sample, '\n') < 0 {
		opts.Logger.Info().Str("input", name).Msg("the input ends lines with CR only (classic Mac); reading CR as a line end")
		text = crToLF{br}
	}
	if enc == record.EncodingWindows1252 {
		if hadBOM || (utf8.Valid(sample) && bytes.ContainsFunc(sample, func(r rune) bool { return r >= utf8.RuneSelf })) {
			opts.Logger.Warn().Str("input", name).
				Msg("the input looks like UTF-8 but is read as windows-1252; accented letters will be garbled (drop --encoding to read it as UTF-8)")
		}
		text = transform.NewReader(text, charmap.Windows1252.NewDecoder())
	}

	delim, detected := opts.Delimiter, false
	// Excel writes, and reads, a first line "sep=;" that names the
	// delimiter; the header is the line after it.
	sepLine := opts.HeaderRow == 0 && len(sample) > 5 && bytes.HasPrefix(sample, []byte("sep=")) &&
		(sample[5] == '\n' || sample[5] == '\r') && record.ValidDelimiter(rune(sample[4]))
	switch {
	case sepLine && delim == 0:
		delim = rune(sample[4])
	case delim == 0:
		delim, detected = detectDelimiter(sample, complete), true
	}

	limit := opts.MaxRecordSize
	if limit <= 0 {
		limit = defaultMaxRecordSize
	}
	guard := &recordGuard{r: text, limit: int64(limit)}
	cr := csv.NewReader(guard)
	cr.Comma = delim
	// Ragged rows are padded or reported here, never rejected by the parser.
	cr.FieldsPerRecord = -1
	// Next copies each record into a slice of its own, so the parser's slice
	// can be reused; the field strings are fresh per record either way.
	cr.ReuseRecord = true

	r := &CSVReader{
		log:       opts.Logger,
		name:      name,
		count:     cnt,
		total:     size,
		cr:        cr,
		guard:     guard,
		checkUTF8: enc == record.EncodingUTF8,
		info: Info{
			Format:            FormatCSV,
			Delimiter:         delim,
			DelimiterDetected: detected,
			Encoding:          enc,
		},
	}
	// --header-row passes over title records above the header.
	headerRow := max(opts.HeaderRow, 1)
	if sepLine {
		headerRow = 2
	}
	var rec []string
	for n := 1; n <= headerRow; n++ {
		rec, err = cr.Read()
		if errors.Is(err, io.EOF) && n > 1 && !sepLine {
			return nil, fmt.Errorf("%s: --header-row %d: the input has only %d record(s)", name, opts.HeaderRow, n-1)
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the input is empty: no header row", name)
		}
		if err != nil {
			return nil, r.readError("header", err)
		}
		if err := r.validate(rec); err != nil {
			return nil, err
		}
		r.recordDone(rec)
	}
	r.info.HeaderRow = headerRow
	r.header = append([]string(nil), rec...)
	return r, nil
}

// Header returns the header cells as read, BOM stripped.
func (r *CSVReader) Header() []string { return r.header }

// Info returns the format, delimiter and encoding in use.
func (r *CSVReader) Info() Info { return r.info }

// Progress returns the bytes consumed so far and the input size (-1 when
// unknown). Reading ahead makes done run up to 64 KiB early.
func (r *CSVReader) Progress() (done, total int64) {
	return r.count.n.Load(), r.total
}

// Next returns the next record. Errors name the line and are fatal.
func (r *CSVReader) Next(ctx context.Context) (record.Row, error) {
	if err := ctx.Err(); err != nil {
		return record.Row{}, err
	}
	if r.closed {
		return record.Row{}, fmt.Errorf("%s: read after close", r.name)
	}
	rec, err := r.cr.Read()
	if errors.Is(err, io.EOF) {
		return record.Row{}, io.EOF
	}
	if err != nil {
		return record.Row{}, r.readError("", err)
	}
	if err := r.validate(rec); err != nil {
		return record.Row{}, err
	}
	line, _ := r.cr.FieldPos(0)
	r.recordDone(rec)
	r.num++
	width := len(r.header)
	if len(rec) > width {
		r.log.Warn().Str("input", r.name).Int("row", r.num).Int("line", line).
			Int("cells", len(rec)).Int("header_cells", width).
			Msg("row has more cells than the header; the extra cells are kept")
	}
	cells := make([]string, max(width, len(rec)))
	copy(cells, rec)
	return record.Row{Num: r.num, Line: line, Cells: cells}, nil
}

// recordDone moves the record guard past rec and notes where it ended.
func (r *CSVReader) recordDone(rec []string) {
	r.guard.start = r.cr.InputOffset()
	if n := len(rec); n > 0 {
		line, _ := r.cr.FieldPos(n - 1)
		r.endLine = line + strings.Count(rec[n-1], "\n")
	}
}

// readError wraps an error of the CSV parser (which names the line itself)
// or of the input.
func (r *CSVReader) readError(what string, err error) error {
	if what != "" {
		what += ": "
	}
	if errors.Is(err, errRecordTooLong) {
		where := fmt.Sprintf("the record after line %d", r.endLine)
		if r.endLine == 0 {
			where = "the first record"
		}
		return fmt.Errorf("%s: %s%s is longer than %d bytes; is a quote left open? (%w)",
			r.name, what, where, r.guard.limit, err)
	}
	if errors.Is(err, csv.ErrBareQuote) {
		// Excel quotes such cells; a database's text export or a script
		// may not.
		return fmt.Errorf("%s: %s%w: a cell that holds a quote must be quoted, its own quotes doubled "+
			`("Unit 5 ""The Mill"""): export the file with quoting`, r.name, what, err)
	}
	return fmt.Errorf("%s: %s%w", r.name, what, err)
}

// validate checks the cells are valid UTF-8 when that is the encoding (a
// windows-1252 decoder yields valid UTF-8 for every byte).
func (r *CSVReader) validate(rec []string) error {
	if !r.checkUTF8 {
		return nil
	}
	for i, s := range rec {
		if !utf8.ValidString(s) {
			line, _ := r.cr.FieldPos(i)
			return &EncodingError{Name: r.name, Line: line, Column: i + 1, Encoding: r.info.Encoding}
		}
	}
	return nil
}

// Close closes the input file (stdin and readers given to NewCSV are left
// open).
func (r *CSVReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return fmt.Errorf("close %s: %w", r.name, err)
		}
	}
	return nil
}

// countingReader counts the bytes read through it, for progress read from
// another goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// crToLF turns every CR into LF, for inputs whose lines end with CR only.
type crToLF struct{ r io.Reader }

func (c crToLF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// errRecordTooLong is returned by recordGuard when a record passes the limit.
var errRecordTooLong = errors.New("record too long")

// recordGuard feeds the CSV parser and fails once it has been fed more than
// limit bytes past the end of the last complete record (start).
type recordGuard struct {
	r            io.Reader
	limit, start int64
	read         int64
}

func (g *recordGuard) Read(p []byte) (int, error) {
	if g.read-g.start > g.limit {
		return 0, errRecordTooLong
	}
	n, err := g.r.Read(p)
	g.read += int64(n)
	return n, err
}

// sizeOf returns the remaining size of r when it is a regular file (an
// input, or stdin redirected from one), else -1.
func sizeOf(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return -1
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return fi.Size() - off
}

// utf16Window is how much of the input looksUTF16 looks at.
const utf16Window = 1024

// looksUTF16 reports whether the start of sample is UTF-16 without a
// byte-order mark: NULs beside non-NUL bytes in at least two and at least an
// eighth of its two-byte units, nearly all on the same side. Text in an 8-bit encoding or
// UTF-8 has no NUL at all, and UTF-16 has one in every unit of the Latin
// script, which digits, delimiters and line ends are written in even in a
// file of Chinese addresses; a binary file has NULs on both sides.
func looksUTF16(sample []byte) bool {
	n := min(len(sample), utf16Window) &^ 1
	le, be := 0, 0
	for i := 0; i < n; i += 2 {
		switch {
		case sample[i] != 0 && sample[i+1] == 0:
			le++
		case sample[i] == 0 && sample[i+1] != 0:
			be++
		}
	}
	same, other := max(le, be), min(le, be)
	return same >= 2 && 8*same >= n/2 && 4*other <= same
}

// delimiters are the candidates of detection, in order of preference on a tie.
var delimiters = [...]byte{',', ';', '\t', '|'}

// detectDelimiter picks the candidate that occurs outside quotes in the header
// line and the same number of times on the following lines of the sample;
// failing consistency, the one most frequent in the header; failing all, a
// comma (a one-column file). complete says the sample is the whole input, so
// its last line is whole.
func detectDelimiter(sample []byte, complete bool) rune {
	const maxLines = 20
	var lines [][len(delimiters)]int
	var cur [len(delimiters)]int
	inQuote, blank := false, true
	for _, c := range sample {
		if c == '"' {
			inQuote = !inQuote
			blank = false
			continue
		}
		if inQuote {
			continue
		}
		if c == '\n' {
			if !blank {
				lines = append(lines, cur)
				if len(lines) == maxLines {
					break
				}
			}
			cur, blank = [len(delimiters)]int{}, true
			continue
		}
		if c != '\r' && c != ' ' {
			blank = false
		}
		for i, d := range delimiters {
			if c == d {
				cur[i]++
			}
		}
	}
	if complete && !blank && len(lines) < maxLines {
		lines = append(lines, cur)
	}
	if len(lines) == 0 {
		return ','
	}
	best, bestConsistent, bestCount := -1, false, 0
	for i := range delimiters {
		h := lines[0][i]
		if h == 0 {
			continue
		}
		consistent := true
		for _, l := range lines[1:] {
			if l[i] != h {
				consistent = false
				break
			}
		}
		better := best < 0 ||
			(consistent && !bestConsistent) ||
			(consistent == bestConsistent && h > bestCount)
		if better {
			best, bestConsistent, bestCount = i, consistent, h
		}
	}
	if best < 0 {
		return ','
	}
	return rune(delimiters[best])
}
