package readers

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/record"
)

// cellTyper reads the types of a sheet's cells from its XML, row by row, in
// step with excelize's row iterator, which gives the text only. Its memory
// is one row's cells.
type cellTyper struct {
	f      *excelize.File // for the styles
	zr     *zip.ReadCloser
	rc     io.ReadCloser
	s      *xmlScanner
	row    int               // the row the scanner is in or has passed
	cur    []record.CellType // the types of row, once it is read
	styles map[int]record.CellType
	done   bool
}

// newCellTyper opens the sheet part of the workbook at path a second time.
func newCellTyper(ctx context.Context, f *excelize.File, path, part string, lim xlsxLimits) (*cellTyper, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for _, zf := range zr.File {
		if zf.Name != part {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			_ = zr.Close()
			return nil, fmt.Errorf("%s: %s: %w", path, part, err)
		}
		return &cellTyper{f: f, zr: zr, rc: rc, s: newXMLScanner(ctxReader{ctx, rc}, lim.rowSize), styles: make(map[int]record.CellType)}, nil
	}
	_ = zr.Close()
	return nil, fmt.Errorf("%s: %w: part %s is missing", path, ErrDamaged, part)
}

// types returns the types of the cells of sheet row n, indexed by column
// (nil when none is a number); rows must be asked for in order. The XML
// was checked by checkWorkbook, so an error here is one of the input.
func (t *cellTyper) types(n int) ([]record.CellType, error) {
	for !t.done && t.row < n {
		if err := t.readRow(); err != nil {
			return nil, err
		}
	}
	if t.row != n {
		return nil, nil
	}
	return t.cur, nil
}

// readRow reads the next row element into cur.
func (t *cellTyper) readRow() error {
	s := t.s
	t.cur = nil
	var (
		inRow, numeric bool
		col, style     int
		depth, vDepth  int // vDepth: depth of the open <v>, or 0
	)
	for {
		tok, err := s.next()
		if errors.Is(err, io.EOF) {
			t.done = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading cell types: %w", err)
		}
		switch tok {
		case tokStart:
			if !s.selfClosing {
				depth++
			}
			switch {
			case s.isName("row"):
				// checkWorkbook refused rows out of order.
				t.row, col, inRow = s.rowNumber(t.row), 0, !s.selfClosing
				if !inRow {
					return nil
				}
			case inRow && s.isName("c"):
				col++
				if v, ok := s.attr("r"); ok {
					if c, _, err := excelize.CellNameToCoordinates(string(v)); err == nil {
						col = c
					}
				}
				typ, _ := s.attr("t")
				numeric = len(typ) == 0 || string(typ) == "n"
				style = 0
				if v, ok := s.attr("s"); ok {
					if n, err := strconv.Atoi(string(v)); err == nil {
						style = n
					}
				}
			case inRow && numeric && s.isName("v") && !s.selfClosing && vDepth == 0:
				vDepth = depth
				s.text.reset()
			}
		case tokEnd:
			depth--
			switch {
			case depth < vDepth:
				vDepth = 0
				v := strings.TrimSpace(string(s.text.b))
				// Only a finite number is one: "NaN" would make an output
				// Excel refuses.
				if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && !s.text.over && col > 0 {
					ct := t.style(style)
					ct.Value = v
					for len(t.cur) < col {
						t.cur = append(t.cur, record.CellType{})
					}
					t.cur[col-1] = ct
				}
			case s.isName("row"):
				return nil
			}
		}
		// encoding/xml leaves out the text of elements inside <v>.
		s.keep = vDepth > 0 && depth == vDepth
	}
}

// style returns the kind and number format of style id (cached: a sheet
// has few).
func (t *cellTyper) style(id int) record.CellType {
	if ct, ok := t.styles[id]; ok {
		return ct
	}
	ct := record.CellType{Kind: record.KindNumber}
	if st, err := t.f.GetStyle(id); err == nil && st != nil {
		ct.NumFmt = st.NumFmt
		if st.CustomNumFmt != nil {
			ct.CustomFmt = *st.CustomNumFmt
		}
		if isDateFormat(ct.NumFmt, ct.CustomFmt) {
			ct.Kind = record.KindDate
		}
	}
	if len(t.styles) < 4096 {
		t.styles[id] = ct
	}
	return ct
}

func (t *cellTyper) close() error {
	return errors.Join(t.rc.Close(), t.zr.Close())
}

// isDateFormat reports whether a number format shows a date or time: a
// built-in date id, or a code with a date or time letter outside quotes,
// brackets ("[Red]", "[$-409]") and escapes.
func isDateFormat(id int, code string) bool {
	if code == "" {
		return id >= 14 && id <= 22 || id >= 27 && id <= 36 || id >= 45 && id <= 47 || id >= 50 && id <= 58
	}
	inQuote, inBracket, escaped := false, false, false
	for _, r := range strings.ToLower(code) {
		switch {
		case escaped:
			escaped = false
		case inQuote:
			inQuote = r != '"'
		case inBracket:
			inBracket = r != ']'
		case r == '\\':
			escaped = true
		case r == '"':
			inQuote = true
		case r == '[':
			inBracket = true
		case strings.ContainsRune("dmyhs", r):
			return true
		}
	}
	return false
}
