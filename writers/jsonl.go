package writers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
)

// jsonlWriter writes one JSON object per row:
//
//	{"row":N,"action":A,"input":{header:cell,...},"response":{...}}
//
// with "error" instead of "response" for an Error row, "input_label" in
// the review output, "changes" (ChangesColumn) after the response, and
// "cached" last with Options.MarkCached (enriched).
// JSON is data, not a spreadsheet, so cells are not neutralised. Unlike the
// CSV and XLSX outputs, whose appended columns fix the width, it keeps cells
// past the header, keyed as unnamed columns ("column_N", see jsonKeys).
type jsonlWriter struct {
	lay  *layout
	out  *output
	bw   *bufio.Writer
	ks   keySet   // the keys so far: the header's, then those of wider rows
	keys [][]byte // `"key":` per column of ks
	buf  bytes.Buffer
	enc  *json.Encoder
}

func newJSONL(lay *layout, path string, opts Options) (*jsonlWriter, error) {
	out, err := openOutput(path, opts.Stdout)
	if err != nil {
		return nil, err
	}
	w := &jsonlWriter{lay: lay, out: out, bw: bufio.NewWriterSize(out.w, csvBuffer)}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	for _, h := range lay.header {
		w.addKey(h)
	}
	return w, nil
}

// addKey adds the encoded key of the next column, named name. It uses buf.
func (w *jsonlWriter) addKey(name string) {
	w.buf.Reset()
	w.str(w.ks.add(name))
	w.buf.WriteByte(':')
	w.keys = append(w.keys, bytes.Clone(w.buf.Bytes()))
}

// value appends v to buf as JSON, without the encoder's newline.
func (w *jsonlWriter) value(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.buf.Truncate(w.buf.Len() - 1)
	return nil
}

// str appends s to buf as a JSON string. Encoding a string into a
// bytes.Buffer cannot fail, so neither can the rendering of a row.
func (w *jsonlWriter) str(s string) {
	_ = w.value(s)
}

func (w *jsonlWriter) write(r Result) error {
	w.render(r)
	w.buf.WriteString("}\n")
	_, err := w.bw.Write(w.buf.Bytes())
	return err
}

// cells renders the row as one cell holding the object without its closing
// brace, and two for the duplicate counts.
func (w *jsonlWriter) cells(r Result, dst []string) []string {
	w.render(r)
	return append(dst, w.buf.String(), "", "")
}

// writeCells appends "duplicates" and "first_row" to a row with an address
// id and closes the object.
func (w *jsonlWriter) writeCells(_ int, cells []string) error {
	w.buf.Reset()
	w.buf.WriteString(cells[0])
	if cells[1] != "" {
		w.buf.WriteString(`,"duplicates":`)
		w.buf.WriteString(cells[1])
		w.buf.WriteString(`,"first_row":`)
		w.buf.WriteString(cells[2])
	}
	w.buf.WriteString("}\n")
	_, err := w.bw.Write(w.buf.Bytes())
	return err
}

func (w *jsonlWriter) dupCols() (int, int) { return 1, 2 }

// render writes the row's object, without its closing brace, into buf. A
// plain row (NewRows) is its cells alone, fitted to the header.
func (w *jsonlWriter) render(r Result) {
	// Cells past the header are kept, under keys added on first sight
	// (addKey uses buf).
	for len(w.keys) < len(r.Cells) && w.lay.kind != plain {
		w.addKey("")
	}
	w.buf.Reset()
	if w.lay.kind == plain {
		w.buf.WriteByte('{')
		w.members(r.Cells, w.lay.width)
		return
	}
	w.buf.WriteString(`{"row":`)
	w.buf.Write(strconv.AppendInt(w.buf.AvailableBuffer(), int64(r.Row), 10))
	w.buf.WriteString(`,"action":`)
	action := Action(r)
	w.str(action)
	w.buf.WriteString(`,"input":{`)
	w.members(r.Cells, max(w.lay.width, len(r.Cells)))
	w.buf.WriteByte('}')
	if w.lay.kind == review {
		w.buf.WriteString(`,"input_label":`)
		w.str(r.InputLabel)
	}
	if action == ActionError {
		w.buf.WriteString(`,"error":`)
		w.str(errorText(r))
	} else {
		mark := w.buf.Len()
		w.buf.WriteString(`,"response":`)
		if err := w.value(r.Response); err != nil {
			// Only a value JSON cannot hold (a NaN coordinate set by a
			// caller) gets here; the row says so rather than failing the
			// whole output.
			w.buf.Truncate(mark)
			w.buf.WriteString(`,"error":`)
			w.str("response could not be encoded: " + err.Error())
		}
	}
	if action != ActionError {
		w.buf.WriteString(`,"changes":`)
		w.str(Changes(r))
	}
	if w.lay.markCached {
		w.buf.WriteString(`,"cached":`)
		w.buf.WriteString(strconv.FormatBool(r.FromCache))
	}
	if w.lay.kind == review {
		// The decision and edit_ keys are the person's to fill in.
		for _, c := range DecisionColumns {
			w.buf.WriteString(`,"` + c + `":""`)
		}
	}
}

// members writes the first n cells as members keyed by column, "" past
// the end of cells.
func (w *jsonlWriter) members(cells []string, n int) {
	for i, k := range w.keys[:n] {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.buf.Write(k)
		w.str(cell(cells, i))
	}
}

func (w *jsonlWriter) finish() error {
	return w.out.finish(w.bw.Flush())
}

func (w *jsonlWriter) discard() error {
	return w.out.abort()
}
