package readers

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// sparseSlack is how many cells without text a sheet may hold beyond
// twice its cells with text before it is read through a rewritten copy:
// excelize decodes an empty cell in about a microsecond, one of white space
// in several. Tests lower it.
var sparseSlack int64 = 1 << 16

// width returns the last column whose text is read: the sheet's declared
// last column, or twice the most cells with text of any row, whichever is
// more. Past it a cell is left out: excelize pads a row with an empty cell
// for every column before its last, so one cell in column XFD would cost
// 16,384 cells in each row it is in.
func (s sheetScan) width() int {
	_, dimCol := dimensionEnd(s.dimension)
	return min(max(dimCol, 2*s.maxRowText), excelize.MaxColumns)
}

// sparse reports whether the sheet is read through a copy that holds only
// its cells with text (see rewriteBook): when most of its cells are empty
// or white space (excelize decodes every one), or a cell with text lies
// past width.
func (s sheetScan) sparse() bool {
	return s.otherCells > 2*s.textCells+sparseSlack || s.maxTextCol > s.width()
}

// droppedCells counts the cells with text a rewritten sheet left out for
// lying past its width, and names the first.
type droppedCells struct {
	n        int64
	row, col int
}

// rewriteBook writes a copy of the workbook at path, in dir, whose sheet
// part holds only the cells excelize would read as text other than white
// space, each with its reference, in the rows that have one (and the last
// row, so that the copy ends where the sheet does); the cells past width
// are left out. The other parts are copied as they are. It returns the
// copy's path. The sheet was checked by checkWorkbook.
func rewriteBook(ctx context.Context, path string, book *checkedBook, dir string, lim xlsxLimits) (_ string, dropped droppedCells, err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", dropped, fmt.Errorf("open %s: %w", path, err)
	}
	defer zr.Close()
	out, err := os.CreateTemp(dir, "addrclean-sheet-*.xlsx")
	if err != nil {
		return "", dropped, fmt.Errorf("%s: copy of the sheet: %w", path, err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: copy of the sheet: %w", path, cerr)
		}
		if err != nil {
			_ = os.Remove(out.Name())
		}
	}()
	zw := zip.NewWriter(out)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	for _, f := range zr.File {
		if f.Name == book.part {
			err = rewritePart(zw, f, func(r io.Reader, w io.Writer) (err error) {
				dropped, err = rewriteSheetXML(ctxReader{ctx, r}, w, book, lim)
				return err
			})
		} else {
			err = copyRaw(zw, f)
		}
		if err != nil {
			return "", dropped, fmt.Errorf("%s: copy of the sheet: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		return "", dropped, fmt.Errorf("%s: copy of the sheet: %w", path, err)
	}
	return out.Name(), dropped, nil
}

func rewritePart(zw *zip.Writer, f *zip.File, rewrite func(io.Reader, io.Writer) error) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
	if err != nil {
		return err
	}
	if err := rewrite(rc, w); err != nil {
		return err
	}
	// To the end, so that the zip checks the part's checksum: the checks
	// rewriteSheetXML skips were made on these bytes.
	_, err = io.Copy(io.Discard, rc)
	return err
}

// copyRaw copies a part without inflating it.
func copyRaw(zw *zip.Writer, f *zip.File) error {
	r, err := f.OpenRaw()
	if err != nil {
		return err
	}
	fh := f.FileHeader
	w, err := zw.CreateRaw(&fh)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

// rewriteSheetXML writes the sheet XML of r to w as rewriteBook describes.
// Cells are copied byte for byte after their start tag, which gains its
// reference when it has none; the XML declaration and the root element's
// start tag (its namespaces) are copied as they are.
func rewriteSheetXML(r io.Reader, w io.Writer, book *checkedBook, lim xlsxLimits) (dropped droppedCells, err error) {
	s := newXMLScanner(r, lim.rowSize)
	s.checked = true // by checkWorkbook (rewritePart has the checksum checked again)
	bw := bufio.NewWriterSize(w, 64<<10)
	width, last := book.scan.width(), book.scan.lastRow
	var (
		depth, dataDepth   int // dataDepth: depth inside <sheetData>, or 0
		root, rowName      []byte
		row, col           int
		rowWritten         bool
		cellDepth, vDepth  int // depth of the open <c> and of its shared <v>, or 0
		shared, cellText   bool
		cellTag, cellAttrs []byte // the open cell's "<name", and its attributes but r
	)
	s.startTee() // the declaration and the root's start tag
	for {
		tok, err := s.next()
		if errors.Is(err, io.EOF) {
			return dropped, errors.New("the sheet has no rows")
		}
		if err != nil {
			return dropped, err
		}
		switch tok {
		case tokStart:
			level := depth // of the element's parent
			if !s.selfClosing {
				depth++
			}
			name, _, _ := splitName(s.tag)
			switch {
			case root == nil:
				root = append([]byte(nil), name...)
				bw.Write(s.stopTee())
				if s.selfClosing {
					return dropped, bw.Flush()
				}
			case dataDepth == 0 && s.isName("sheetData"):
				bw.WriteString("<" + string(s.tag))
				if s.selfClosing {
					bw.WriteString("/></" + string(root) + ">")
					return dropped, bw.Flush()
				}
				bw.WriteString(">")
				dataDepth = depth
			case dataDepth > 0 && level == dataDepth && s.isName("row"):
				row = s.rowNumber(row)
				rowName, rowWritten, col = append(rowName[:0], name...), false, 0
				if s.selfClosing && row == last {
					bw.WriteString("<" + string(rowName) + ` r="` + strconv.Itoa(row) + `"/>`)
				}
			case dataDepth > 0 && cellDepth == 0 && level == dataDepth+1 && s.isName("c"):
				col++
				if ref, _ := s.attr("r"); len(ref) > 0 {
					col = refColumn(ref)
				}
				if s.selfClosing {
					break // no text
				}
				// The start tag without its reference, which is written
				// with the cell: its attributes as they are, quoted anew.
				cellTag = append(append(cellTag[:0], '<'), name...)
				cellAttrs = cellAttrs[:0]
				for _, a := range s.attrs {
					if string(a.name) == "r" {
						continue
					}
					q := byte('"')
					if bytes.IndexByte(a.value, '"') >= 0 {
						q = '\''
					}
					cellAttrs = append(append(cellAttrs, ' '), a.name...)
					cellAttrs = append(append(append(cellAttrs, '=', q), a.value...), q)
				}
				t, _ := s.attr("t")
				shared, cellText, cellDepth = string(t) == "s", false, depth
				s.startTee()
			case cellDepth > 0 && shared && vDepth == 0 && s.isName("v") && !s.selfClosing:
				vDepth = depth
				s.text.reset()
			}
		case tokEnd:
			depth--
			switch {
			case vDepth > 0 && depth < vDepth:
				vDepth = 0
				if i, err := checkSharedIndex(s.text.b, s.text.over, len(book.sst)); err == nil {
					cellText = cellText || book.sst[i]&sstBlank == 0
				}
			case cellDepth > 0 && depth < cellDepth:
				cellDepth = 0
				body := s.stopTee()
				switch {
				case !cellText:
				case col > width:
					if dropped.n++; dropped.n == 1 {
						dropped.row, dropped.col = row, col
					}
				default:
					if !rowWritten {
						bw.WriteString("<" + string(rowName) + ` r="` + strconv.Itoa(row) + `">`)
						rowWritten = true
					}
					// col is inside the sheet: width is.
					ref, _ := excelize.CoordinatesToCellName(col, row)
					bw.Write(cellTag)
					bw.WriteString(` r="` + ref + `"`)
					bw.Write(cellAttrs)
					bw.WriteByte('>')
					bw.Write(body)
				}
			case dataDepth > 0 && depth == dataDepth && s.isName("row"):
				switch {
				case rowWritten:
					bw.WriteString("</" + string(rowName) + ">")
				case row == last:
					bw.WriteString("<" + string(rowName) + ` r="` + strconv.Itoa(row) + `"/>`)
				}
			case dataDepth > 0 && depth < dataDepth:
				// The end of the rows: excelize reads no further.
				bw.WriteString("</" + string(s.tag) + "></" + string(root) + ">")
				return dropped, bw.Flush()
			}
		case tokOther:
			if cellDepth > 0 && s.textLen > 0 && !s.textBlank && vDepth == 0 {
				cellText = true
			}
		}
		s.keep = vDepth > 0 && depth == vDepth
	}
}
