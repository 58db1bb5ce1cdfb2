package readers

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Defaults of the XLSX limits of Options. excelize decodes a sheet with
// encoding/xml, which holds a whole text run in memory, and keeps about 100
// bytes per shared string (the text itself goes to a temporary file above
// 16 MiB of them), so these bound what a small hostile file can make it do,
// while a full sheet of a real CRM export (1,048,576 rows, a few unique texts
// per row) stays well inside them.
const (
	// defaultMaxRowSize is far above a real row (a cell holds at most
	// 32,767 characters, and text cells of exports refer to shared strings),
	// and matches the CSV record limit.
	defaultMaxRowSize = 16 << 20
	// defaultMaxRowCells is the number of columns a sheet can have.
	defaultMaxRowCells = excelize.MaxColumns
	// defaultMaxSharedStrings allows 16 distinct texts in every row of a
	// full sheet; excelize needs about 1.7 GB of memory for as many.
	defaultMaxSharedStrings = 1 << 24
	// defaultMaxSharedStringsSize allows 64 bytes of markup and text for
	// each of them.
	defaultMaxSharedStringsSize = 1 << 30
	// maxInMemoryParts bounds the parts excelize loads whole into memory:
	// all but the worksheets and shared strings it streams from temporary
	// files (those over xmlStreamSize). A CRM export's add up to a few MB; a
	// hostile one could declare gigabytes of styles or "images" that
	// compress to nothing. It is not an option: no real workbook comes near.
	maxInMemoryParts = 256 << 20
	// xmlStreamSize is the size above which excelize unpacks a worksheet or
	// the shared strings to a temporary file instead of memory.
	xmlStreamSize = excelize.StreamChunkSize
	// defaultMaxTextRatio bounds the text of a sheet's cells to this many
	// times the workbook's size. Each cell refers to its shared string by
	// number, so a 1 MB workbook whose 400,000 cells all refer to one string
	// of 30,000 characters reads as 12 GB of text (and wrote 21 GB of
	// outputs). A real export's text is a few times its file at most: a
	// text cell takes 3 to 5 compressed bytes of XML, so reaching the bound
	// takes cells of 300 characters and more on average, all of them.
	defaultMaxTextRatio = 100
	// minTextLimit is the text every workbook may hold, however small: the
	// ratio is for the large ones.
	minTextLimit = 64 << 20
)

// xlsxLimits are the limits of Options with their defaults applied.
type xlsxLimits struct {
	unzip, rowSize, sstSize int64
	rowCells, sstCount      int
	textRatio               int64
}

func limitsOf(opts Options) xlsxLimits {
	or := func(v, def int64) int64 {
		if v <= 0 {
			return def
		}
		return v
	}
	return xlsxLimits{
		unzip:     or(opts.MaxUnzipSize, defaultMaxUnzipSize),
		rowSize:   or(opts.MaxRowSize, defaultMaxRowSize),
		sstSize:   or(opts.MaxSharedStringsSize, defaultMaxSharedStringsSize),
		rowCells:  int(or(int64(opts.MaxRowCells), defaultMaxRowCells)),
		sstCount:  int(or(int64(opts.MaxSharedStrings), defaultMaxSharedStrings)),
		textRatio: or(int64(opts.MaxTextRatio), defaultMaxTextRatio),
	}
}

// sharedStringsPath is the part of the shared strings as excelize names it.
const sharedStringsPath = "xl/sharedStrings.xml"

// checkedBook is what checkWorkbook found.
type checkedBook struct {
	sheets []string // names in workbook order
	sheet  string   // the sheet to read
	part   string   // the zip entry of its XML
	scan   sheetScan
	// sst are the lengths of the shared strings (see sstBlank), for
	// rewriteBook.
	sst []uint32
}

// checkWorkbook checks the workbook at path before excelize opens it, so
// that a damaged or hostile file fails with a clear error instead of losing
// rows or taking gigabytes: every part of the zip is read to its end (which
// makes archive/zip check its size and checksum), the sizes declared in the
// zip are held to the limits, and the shared strings and the sheet to read
// are scanned against the limits, with memory bounded by the longest row.
func checkWorkbook(ctx context.Context, name, sheet string, lim xlsxLimits) (*checkedBook, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("%s: not an XLSX workbook (%w)", name, err)
		}
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer zr.Close()
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	c := &pkgChecker{name: name, lim: lim, files: make(map[string]*zip.File, len(zr.File)), read: make(map[*zip.File]bool),
		textLimit: max(minTextLimit, min(fi.Size(), math.MaxInt64/lim.textRatio)*lim.textRatio)}
	if err := c.index(zr.File); err != nil {
		return nil, err
	}
	sheets, paths, err := c.sheets(ctx)
	if err != nil {
		return nil, err
	}
	picked, err := pickSheet(sheets, sheet)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sheetFile := c.files[paths[picked]]
	switch {
	case paths[picked] == "":
		return nil, fmt.Errorf("%s: %w: the workbook names no part for sheet %q", name, ErrDamaged, picked)
	case sheetFile == nil:
		return nil, fmt.Errorf("%s: %w: part %s of sheet %q is missing", name, ErrDamaged, paths[picked], picked)
	}
	var sst []uint32
	if f := c.files[sharedStringsPath]; f != nil {
		err := c.readPart(ctx, f, func(r io.Reader) (err error) {
			sst, err = c.scanSharedStringsXML(r, f.Name)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	var scan sheetScan
	err = c.readPart(ctx, sheetFile, func(r io.Reader) (err error) {
		scan, err = c.scanSheetXML(r, sheetFile.Name, picked, sst)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The other parts are only checked against their size and checksum:
	// excelize keeps what it reads of a damaged part without a word.
	for _, f := range zr.File {
		if c.read[f] {
			continue
		}
		if err := c.copyPart(ctx, f, io.Discard); err != nil {
			return nil, err
		}
	}
	return &checkedBook{sheets: sheets, sheet: picked, part: sheetFile.Name, scan: scan, sst: sst}, nil
}

// pkgChecker reads the parts of a workbook's zip for checkWorkbook.
type pkgChecker struct {
	name  string
	lim   xlsxLimits
	files map[string]*zip.File // by the names excelize gives the parts
	read  map[*zip.File]bool   // parts already read to their end
	// textLimit bounds the text of the sheet's cells (lim.textRatio times
	// the file's size, or minTextLimit).
	textLimit int64
}

// index names the parts as excelize does and holds the sizes the zip
// declares to the limits. Declared sizes bound what excelize reads of each
// part (archive/zip fails a part that holds more), so checking them bounds
// its memory and disk use before anything is unpacked.
func (c *pkgChecker) index(files []*zip.File) error {
	var total, inMemory uint64
	for _, f := range files {
		n := strings.ReplaceAll(f.Name, `\`, "/")
		switch strings.ToLower(n) {
		case "[content_types].xml":
			n = "[Content_Types].xml"
		case "xl/sharedstrings.xml":
			n = sharedStringsPath
		}
		c.files[n] = f
		size := f.UncompressedSize64
		total += size
		if total > uint64(c.lim.unzip) {
			return &LimitError{Name: c.name, Part: "the workbook", What: "the unpacked size", Limit: c.lim.unzip, Option: "MaxUnzipSize", bytes: true}
		}
		streamed := size > xmlStreamSize && !f.FileInfo().IsDir() &&
			(n == sharedStringsPath || strings.HasPrefix(strings.ToLower(n), "xl/worksheets/sheet"))
		if !streamed {
			inMemory += size
		}
		if inMemory > maxInMemoryParts {
			return &LimitError{Name: c.name, Part: "the workbook", What: "the size of the parts read into memory (all but worksheets and shared strings over 16 MiB)", Limit: maxInMemoryParts, bytes: true}
		}
		if n == sharedStringsPath && size > uint64(c.lim.sstSize) {
			return &LimitError{Name: c.name, Part: "shared strings", What: "the unpacked size", Limit: c.lim.sstSize, Option: "MaxSharedStringsSize", bytes: true}
		}
	}
	return nil
}

// sheets returns the workbook's sheet names in order and the parts that hold
// them, found as excelize finds them: the package's relationships name the
// workbook part, whose relationships name each sheet's part.
func (c *pkgChecker) sheets(ctx context.Context) ([]string, map[string]string, error) {
	var rels xmlRels
	if err := c.decodePart(ctx, "_rels/.rels", &rels); err != nil {
		return nil, nil, err
	}
	wbPath := ""
	// Strict Open XML, which excelize translates, names relationships and
	// their namespace differently.
	for _, r := range rels.Rels {
		if r.Type == excelize.SourceRelationshipOfficeDocument || r.Type == excelize.StrictSourceRelationshipOfficeDocument {
			wbPath = strings.TrimPrefix(r.Target, "/")
			break
		}
	}
	var wb xmlWorkbook
	if err := c.decodePart(ctx, wbPath, &wb); err != nil {
		return nil, nil, err
	}
	relsPath := "_rels/" + path.Base(wbPath) + ".rels"
	if dir := path.Dir(wbPath); dir != "." {
		relsPath = strings.TrimPrefix(dir+"/"+relsPath, "/")
	}
	var wbRels xmlRels
	if err := c.decodePart(ctx, relsPath, &wbRels); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(wb.Sheets))
	paths := make(map[string]string, len(wb.Sheets))
	for _, s := range wb.Sheets {
		names = append(names, s.Name)
		var id string
		for _, a := range s.Attrs {
			if a.Name.Local == "id" && (a.Name.Space == excelize.SourceRelationship.Value || a.Name.Space == excelize.StrictSourceRelationship) {
				id = a.Value
			}
		}
		for _, r := range wbRels.Rels {
			if r.ID == id {
				paths[s.Name] = worksheetPath(wbPath, r.Target)
			}
		}
	}
	return names, paths, nil
}

// worksheetPath resolves a relationship's target against the workbook's
// folder, as excelize does.
func worksheetPath(wbPath, target string) string {
	if !strings.HasPrefix(target, "/") {
		target = path.Dir(wbPath) + "/" + target
	}
	return strings.TrimPrefix(strings.ReplaceAll(path.Clean(target), `\`, "/"), "/")
}

type xmlRels struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
	} `xml:"Relationship"`
}

type xmlWorkbook struct {
	Sheets []struct {
		Name  string     `xml:"name,attr"`
		Attrs []xml.Attr `xml:",any,attr"`
	} `xml:"sheets>sheet"`
}

// decodePart reads a small part to its end and decodes it; a missing part
// decodes as nothing, as in excelize.
func (c *pkgChecker) decodePart(ctx context.Context, name string, v any) error {
	f := c.files[name]
	if f == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := c.copyPart(ctx, f, &buf); err != nil {
		return err
	}
	if err := xml.Unmarshal(buf.Bytes(), v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w: part %s: %w", c.name, ErrDamaged, f.Name, err)
	}
	return nil
}

// readPart opens a part for read, then reads what read left of it, so that
// archive/zip checks its size and checksum; index has bounded its size.
func (c *pkgChecker) readPart(ctx context.Context, f *zip.File, read func(io.Reader) error) error {
	c.read[f] = true
	rc, err := f.Open()
	if err != nil {
		return c.partError(f.Name, err)
	}
	defer rc.Close()
	r := ctxReader{ctx, rc}
	if err := read(r); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return c.partError(f.Name, err)
	}
	return nil
}

func (c *pkgChecker) copyPart(ctx context.Context, f *zip.File, w io.Writer) error {
	return c.readPart(ctx, f, func(r io.Reader) error {
		if _, err := io.Copy(w, r); err != nil {
			return c.partError(f.Name, err)
		}
		return nil
	})
}

// partError describes an error reading a part of the zip.
func (c *pkgChecker) partError(part string, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, zip.ErrFormat):
		return fmt.Errorf("%s: %w: part %s holds more data than the zip declares (%w)", c.name, ErrDamaged, part, err)
	case errors.Is(err, zip.ErrChecksum):
		return fmt.Errorf("%s: %w: part %s fails its checksum (%w)", c.name, ErrDamaged, part, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: %w: part %s is cut short (%w)", c.name, ErrDamaged, part, err)
	case errors.As(err, &corrupt), errors.Is(err, zip.ErrAlgorithm):
		return fmt.Errorf("%s: %w: part %s: %w", c.name, ErrDamaged, part, err)
	}
	return fmt.Errorf("read %s: part %s: %w", c.name, part, err)
}

// ctxReader stops a long read when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// Shared strings' lengths as scanSharedStringsXML returns them: the text's
// bytes, at most sstMaxLen, and sstBlank when it is only white space.
const (
	sstBlank  = 1 << 31
	sstMaxLen = sstBlank - 1
)

// scanSharedStringsXML returns the length of each string of a shared-string
// part (the bytes of its text as written; see sstBlank), failing
// once they pass the count limit, or one string (or anything between them)
// passes the row size limit, or the XML ends before its root element does.
// The lengths take 4 bytes a string, against excelize's 100.
func (c *pkgChecker) scanSharedStringsXML(r io.Reader, part string) ([]uint32, error) {
	s := newXMLScanner(r, c.lim.rowSize)
	count, depth := 0, 0
	var lens []uint32
	var siStart int64 = -1
	for {
		tok, err := s.next()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && depth == 0:
				return lens, nil
			case errors.Is(err, io.EOF), errors.Is(err, errXMLCut):
				at := fmt.Sprintf("after %d strings", count)
				if siStart >= 0 {
					at = fmt.Sprintf("in the middle of string %d", count-1)
				}
				return nil, fmt.Errorf("%s: %w: the XML of the shared strings ends %s, before their end; strings are missing", c.name, ErrDamaged, at)
			case errors.As(err, new(*xmlSyntaxError)):
				return nil, fmt.Errorf("%s: %w: shared strings, string %d: %w", c.name, ErrDamaged, count-1, err)
			case errors.Is(err, errTokenTooLong):
				what := "one XML item between strings"
				if siStart >= 0 {
					what = fmt.Sprintf("the XML of string %d", count-1)
				}
				return nil, &LimitError{Name: c.name, Part: "shared strings", What: what, Limit: c.lim.rowSize, Option: "MaxRowSize", bytes: true}
			}
			return nil, c.partError(part, err)
		}
		if s.offset() > c.lim.sstSize {
			return nil, &LimitError{Name: c.name, Part: "shared strings", What: "the unpacked size", Limit: c.lim.sstSize, Option: "MaxSharedStringsSize", bytes: true}
		}
		switch tok {
		case tokStart:
			if depth == 1 && s.isName("si") {
				if count++; count > c.lim.sstCount {
					return nil, &LimitError{Name: c.name, Part: "shared strings", What: "the number of strings", Limit: int64(c.lim.sstCount), Option: "MaxSharedStrings"}
				}
				lens = append(lens, sstBlank)
				if !s.selfClosing {
					siStart = s.tokStartOff
				}
			}
			if !s.selfClosing {
				depth++
			}
		case tokEnd:
			depth--
			if depth == 1 {
				siStart = -1
			}
		case tokOther:
			// The text of a string, its phonetic runs included: more than
			// excelize shows, never less.
			if siStart >= 0 {
				n := &lens[count-1]
				*n = *n&sstBlank | uint32(min(int64(*n&^sstBlank)+s.textLen, sstMaxLen))
				if s.textLen > 0 && !s.textBlank {
					*n &^= sstBlank
				}
			}
		}
		// excelize holds one string whole: a string gets a row's budget.
		s.limit = c.lim.rowSize
		if siStart >= 0 {
			s.limit = c.lim.rowSize - (s.offset() - siStart)
		}
	}
}

// sheetScan is what scanSheet found in a sheet.
type sheetScan struct {
	// dimension is the ref of the sheet's <dimension>, "" when it has none.
	dimension string
	// lastRow is the number of the last row, as excelize numbers them.
	lastRow int
	// text is the length of the text of the cells, shared strings counted
	// at each cell that refers to them (bytes as written).
	text int64
	// textCells are the cells holding text other than white space, and
	// otherCells the others (empty, or white space only); maxRowText is
	// the most textCells of one row, maxTextCol the last column of one.
	textCells, otherCells  int64
	maxRowText, maxTextCol int
}

// scanSheetXML reads the XML of the sheet named sheet, held in the part
// named part, whose workbook has shared strings of the lengths sst, up to
// the end of its rows (readPart reads the rest). It fails
// when a row's XML passes the row size limit (or anything outside rows
// does), a row has more cells than the limit, rows are out of order, a cell
// refers to a shared string that does not exist, the text of the cells
// passes c.textLimit, or the XML ends before its rows do.
func (c *pkgChecker) scanSheetXML(r io.Reader, part, sheet string, sst []uint32) (sheetScan, error) {
	var res sheetScan
	s := newXMLScanner(r, c.lim.rowSize)
	where := func(row int) string { return fmt.Sprintf("sheet %q row %d", sheet, row) }
	rowTooLong := func(row int) error {
		return &LimitError{Name: c.name, Part: where(row), Sheet: sheet, Row: row, What: "the XML of the row", Limit: c.lim.rowSize, Option: "MaxRowSize", bytes: true}
	}
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: sheet %q: %s", c.name, ErrDamaged, sheet, fmt.Sprintf(format, args...))
	}
	var (
		row, cells, depth int
		rowStart          int64 = -1 // offset of the open row's start tag
		inCell            bool
		vDepth            int    // depth of the open <v> of a shared string, or 0
		shared            bool   // the open cell is a shared string
		lastRef           []byte // the last cell reference seen in the row
		sinceRef          int    // cells since lastRef
		refCol            int    // the column of lastRef (0 without one)
		cellText          bool   // the open cell holds text other than white space
		rowText           int    // cells with text in the row
		gotDim, inData    bool
	)
	for {
		tok, err := s.next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, errXMLCut) {
				switch {
				case rowStart >= 0:
					return res, damaged("the XML of the sheet ends in the middle of row %d; rows may be missing", row)
				case row > 0:
					return res, damaged("the XML of the sheet ends after row %d, before the end of its rows; rows may be missing", row)
				case inData || depth > 0 || errors.Is(err, errXMLCut):
					return res, damaged("the XML of the sheet ends before its rows")
				}
				// A whole sheet without <sheetData> has no rows, as in
				// excelize.
				return res, nil
			}
			if errors.As(err, new(*xmlSyntaxError)) {
				// excelize would stop at it without a word.
				if rowStart >= 0 {
					return res, damaged("row %d: %v", row, err)
				}
				return res, damaged("after row %d: %v", row, err)
			}
			if errors.Is(err, errTokenTooLong) {
				if rowStart >= 0 {
					return res, rowTooLong(row)
				}
				return res, &LimitError{Name: c.name, Part: fmt.Sprintf("sheet %q after row %d", sheet, row), Sheet: sheet, Row: row, What: "one XML item between rows", Limit: c.lim.rowSize, Option: "MaxRowSize", bytes: true}
			}
			return res, c.partError(part, err)
		}
		switch tok {
		case tokStart:
			if !s.selfClosing {
				depth++
			}
			switch {
			case s.isName("row"):
				if rowStart >= 0 {
					return res, damaged("a row starts inside row %d", row)
				}
				n := s.rowNumber(row)
				if n <= row {
					return res, damaged("row %d comes after row %d; rows must be in order", n, row)
				}
				if n > excelize.TotalRows {
					return res, damaged("row %d is past the last row a sheet can have (%d)", n, excelize.TotalRows)
				}
				row, cells, lastRef, sinceRef, refCol, rowText = n, 0, lastRef[:0], 0, 0, 0
				if !s.selfClosing {
					rowStart = s.tokStartOff
				}
			case rowStart >= 0 && s.isName("c"):
				if cells++; cells > c.lim.rowCells {
					return res, &LimitError{Name: c.name, Part: where(row), Sheet: sheet, Row: row, What: "the number of cells", Limit: int64(c.lim.rowCells), Option: "MaxRowCells"}
				}
				if v, ok := s.attr("r"); ok && len(v) > 0 {
					lastRef, sinceRef = append(lastRef[:0], v...), 0
					refCol = refColumn(v)
				} else {
					sinceRef++
				}
				t, _ := s.attr("t")
				shared = string(t) == "s"
				inCell, cellText = !s.selfClosing, false
				if s.selfClosing {
					res.otherCells++
				}
			case inCell && s.isName("v"):
				if shared && !s.selfClosing && vDepth == 0 {
					vDepth = depth
					s.text.reset()
				}
			case !gotDim && !inData && s.isName("dimension"):
				if v, ok := s.attr("ref"); ok {
					res.dimension, gotDim = string(v), true
				}
			case s.isName("sheetData"):
				inData = true
				if s.selfClosing {
					return res, nil
				}
			}
		case tokEnd:
			depth--
			switch {
			case depth < vDepth:
				vDepth = 0
				i, err := checkSharedIndex(s.text.b, s.text.over, len(sst))
				if err != nil {
					return res, damaged("row %d, %s: %v", row, cellName(lastRef, sinceRef, row), err)
				}
				res.text += int64(sst[i] &^ sstBlank)
				cellText = cellText || sst[i]&sstBlank == 0
			case inCell && s.isName("c"):
				inCell = false
				if !cellText {
					res.otherCells++
					break
				}
				res.textCells++
				rowText++
				res.maxRowText = max(res.maxRowText, rowText)
				res.maxTextCol = max(res.maxTextCol, refCol+sinceRef)
			case rowStart >= 0 && s.isName("row"):
				rowStart, inCell = -1, false
			case s.isName("sheetData"):
				if rowStart >= 0 {
					return res, damaged("row %d does not end before the end of the rows", row)
				}
				// excelize reads no further; the rest is only checked.
				res.lastRow = row
				return res, nil
			}
		}
		if tok == tokOther && inCell {
			// The cell's own text (a shared string's number too: a few
			// bytes more than excelize shows, never less).
			res.text += s.textLen
			cellText = cellText || s.textLen > 0 && !s.textBlank && !(shared && vDepth > 0)
		}
		if res.text > c.textLimit {
			return res, &LimitError{Name: c.name, Part: where(row), Sheet: sheet, Row: row,
				What:  fmt.Sprintf("the text of the cells up to this row (shared strings counted at every cell that refers to them; the limit is %d times the file's size, and at least %d MiB)", c.lim.textRatio, minTextLimit>>20),
				Limit: c.textLimit, Option: "MaxTextRatio", bytes: true}
		}
		// encoding/xml leaves out the text of elements inside <v>.
		s.keep = vDepth > 0 && depth == vDepth
		res.lastRow = row
		s.limit = c.lim.rowSize
		if rowStart >= 0 {
			// A row is held whole by excelize: the whole row gets the budget.
			s.limit = c.lim.rowSize - (s.offset() - rowStart)
			if s.limit < 0 {
				return res, rowTooLong(row)
			}
		}
	}
}

// rowNumber returns the number excelize gives the row whose start tag s
// has read, after row prev: its r attribute, or prev+1 when it has none or
// one that is not a number, or 0.
func (s *xmlScanner) rowNumber(prev int) int {
	if v, ok := s.attr("r"); ok {
		if n, err := strconv.Atoi(string(v)); err == nil && n != 0 {
			return n
		}
	}
	return prev + 1
}

// checkSharedIndex checks that the text of a shared-string cell's value,
// read the way excelize reads it (an integer, white space trimmed), names a
// string that exists: excelize shows a missing one as an empty cell or as
// the index itself, and a value that is not a number as the first string.
func checkSharedIndex(text []byte, over bool, count int) (int, error) {
	v := string(text)
	if strings.ContainsRune(v, '&') {
		var dec string
		if err := xml.Unmarshal([]byte("<v>"+v+"</v>"), &dec); err == nil {
			v = dec
		}
	}
	v = strings.TrimSpace(v)
	i, err := strconv.Atoi(v)
	if over || err != nil {
		return 0, fmt.Errorf("the shared-string reference %q is not a number", v)
	}
	if i < 0 || i >= count {
		return 0, fmt.Errorf("shared string %d does not exist; the workbook has %d", i, count)
	}
	return i, nil
}

// refColumn returns the column of a cell reference such as "AB12", as
// excelize reads it, without the allocations of
// excelize.CellNameToCoordinates (this runs for every cell); 0 when it has
// no column letters or more than a sheet's three.
func refColumn(ref []byte) int {
	if len(ref) > 0 && ref[0] == '$' {
		ref = ref[1:]
	}
	col, n := 0, 0
	for ; n < len(ref); n++ {
		c := ref[n] | 0x20 // lower case
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
	}
	if n == 0 || n > 3 {
		return 0
	}
	return col
}

// cellName names a cell for messages, by column and reference: its own
// reference, or the column counted on from the last reference in the row
// (or from the row's start), as excelize counts.
func cellName(lastRef []byte, sinceRef, row int) string {
	col := sinceRef
	if len(lastRef) > 0 {
		c, _, err := excelize.CellNameToCoordinates(string(lastRef))
		if err != nil {
			return fmt.Sprintf("cell %d after cell %q", sinceRef, lastRef)
		}
		col += c
	}
	name, err := excelize.CoordinatesToCellName(col, row)
	if err != nil {
		return fmt.Sprintf("column %d", col)
	}
	letters, _, _ := excelize.SplitCellName(name)
	return fmt.Sprintf("column %s (cell %s)", letters, name)
}
