package readers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/record"
)

// readAll reads every row of r, returning the cells and the lines.
func readAll(t testing.TB, r Reader) (rows [][]string, lines []int, err error) {
	t.Helper()
	ctx := context.Background()
	for n := 1; ; n++ {
		row, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows, lines, nil
		}
		if err != nil {
			return rows, lines, err
		}
		if row.Num != n {
			t.Fatalf("row %d has Num %d", n, row.Num)
		}
		rows = append(rows, row.Cells)
		lines = append(lines, row.Line)
	}
}

func TestCSV(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		opts       Options
		wantHeader []string
		wantRows   [][]string
		wantLines  []int
		wantDelim  rune
		wantErr    string // substring; when set, of Open or of reading
	}{
		{
			name:       "comma",
			in:         "id,street,town\n1,Main St,Cork\n2,High St,Sligo\n",
			wantHeader: []string{"id", "street", "town"},
			wantRows:   [][]string{{"1", "Main St", "Cork"}, {"2", "High St", "Sligo"}},
			wantLines:  []int{2, 3},
			wantDelim:  ',',
		},
		{
			name:       "--header-row passes over a title record",
			in:         "Customer export\nid,street,town\n1,Main St,Cork\n",
			opts:       Options{HeaderRow: 2, Delimiter: ','},
			wantHeader: []string{"id", "street", "town"},
			wantRows:   [][]string{{"1", "Main St", "Cork"}},
			wantLines:  []int{3},
			wantDelim:  ',',
		},
		{
			name:    "--header-row past the end",
			in:      "Customer export\n",
			opts:    Options{HeaderRow: 3},
			wantErr: "--header-row 3: the input has only 1 record(s)",
		},
		{
			name:       "bom stripped before quoted header",
			in:         "\xEF\xBB\xBF\"id\",\"town\"\n1,Cork\n",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Cork"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "semicolon detected",
			in:         "id;street;town\n1;Main St, Upper;Cork\n",
			wantHeader: []string{"id", "street", "town"},
			wantRows:   [][]string{{"1", "Main St, Upper", "Cork"}},
			wantLines:  []int{2},
			wantDelim:  ';',
		},
		{
			name:       "tab detected",
			in:         "id\tstreet\n1\tMain St, Upper\n",
			wantHeader: []string{"id", "street"},
			wantRows:   [][]string{{"1", "Main St, Upper"}},
			wantLines:  []int{2},
			wantDelim:  '\t',
		},
		{
			name:       "pipe detected",
			in:         "id|street|town\n1|Main St|Cork\n",
			wantHeader: []string{"id", "street", "town"},
			wantRows:   [][]string{{"1", "Main St", "Cork"}},
			wantLines:  []int{2},
			wantDelim:  '|',
		},
		{
			name:       "consistent delimiter beats a frequent one",
			in:         "a;b,c,d;e\n1;2,3;4\n5;6;7\n",
			wantHeader: []string{"a", "b,c,d", "e"},
			wantRows:   [][]string{{"1", "2,3", "4"}, {"5", "6", "7"}},
			wantLines:  []int{2, 3},
			wantDelim:  ';',
		},
		{
			name:       "delimiters inside quotes do not count",
			in:         "\"a;b;c;d\",e\n\"1;2\",3\n",
			wantHeader: []string{"a;b;c;d", "e"},
			wantRows:   [][]string{{"1;2", "3"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "single column",
			in:         "address\n1 Main St\n",
			wantHeader: []string{"address"},
			wantRows:   [][]string{{"1 Main St"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "given delimiter",
			in:         "a;b,c\n1;2,3\n",
			opts:       Options{Delimiter: ','},
			wantHeader: []string{"a;b", "c"},
			wantRows:   [][]string{{"1;2", "3"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "quoted delimiters, quotes and newlines",
			in:         "id,address,town\n1,\"12 Main St, Apt 3\",\"Cork\"\n2,\"The \"\"Old\"\" Mill\nMill Lane\",Sligo\n3,x,y\n",
			wantHeader: []string{"id", "address", "town"},
			wantRows: [][]string{
				{"1", "12 Main St, Apt 3", "Cork"},
				{"2", "The \"Old\" Mill\nMill Lane", "Sligo"},
				{"3", "x", "y"},
			},
			wantLines: []int{2, 3, 5},
			wantDelim: ',',
		},
		{
			name:       "crlf",
			in:         "id,town\r\n1,Cork\r\n2,\"a\r\nb\"\r\n",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Cork"}, {"2", "a\nb"}},
			wantLines:  []int{2, 3},
			wantDelim:  ',',
		},
		{
			name:       "classic mac line ends",
			in:         "id,town\r1,Cork\r2,\"a\rb\"\r",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Cork"}, {"2", "a\nb"}},
			wantLines:  []int{2, 3},
			wantDelim:  ',',
		},
		{
			name:       "no final newline",
			in:         "id,town\n1,Cork",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Cork"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "short rows padded, long rows kept",
			in:         "a,b,c\n1\n1,2\n1,2,3,4,5\n,,\n",
			wantHeader: []string{"a", "b", "c"},
			wantRows:   [][]string{{"1", "", ""}, {"1", "2", ""}, {"1", "2", "3", "4", "5"}, {"", "", ""}},
			wantLines:  []int{2, 3, 4, 5},
			wantDelim:  ',',
		},
		{
			name:       "blank lines are not rows",
			in:         "a,b\n\n1,2\n\n\n3,4\n",
			wantHeader: []string{"a", "b"},
			wantRows:   [][]string{{"1", "2"}, {"3", "4"}},
			wantLines:  []int{3, 6},
			wantDelim:  ',',
		},
		{
			name:       "header only",
			in:         "a,b\n",
			wantHeader: []string{"a", "b"},
			wantDelim:  ',',
		},
		{
			name:       "windows-1252",
			in:         "name,town\nCaf\xe9 \x80,D\xfan Laoghaire\n",
			opts:       Options{Encoding: "windows-1252"},
			wantHeader: []string{"name", "town"},
			wantRows:   [][]string{{"Café €", "Dún Laoghaire"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "cp1252 alias",
			in:         "t\n\xc9ire\n",
			opts:       Options{Encoding: "CP1252"},
			wantHeader: []string{"t"},
			wantRows:   [][]string{{"Éire"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "utf-8 accents",
			in:         "t\nDún Laoghaire\n",
			wantHeader: []string{"t"},
			wantRows:   [][]string{{"Dún Laoghaire"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "record limit applies per record",
			in:         "a,b\n" + strings.Repeat("1,\"x\ny\"\n", 2000),
			opts:       Options{MaxRecordSize: 100},
			wantHeader: []string{"a", "b"},
			wantRows:   slices.Repeat([][]string{{"1", "x\ny"}}, 2000),
			wantLines: func() []int {
				l := make([]int, 2000)
				for i := range l {
					l[i] = 2 + 2*i
				}
				return l
			}(),
			wantDelim: ',',
		},
		{
			name:    "a quote left open stops at the record limit",
			in:      "a,b\n1,\"x\ny\"\n3,\"" + strings.Repeat("long line\n", 1000),
			opts:    Options{MaxRecordSize: 1000},
			wantErr: "the record after line 3 is longer than 1000 bytes; is a quote left open?",
		},
		{
			name:    "a header quote left open",
			in:      "\"a,b\n" + strings.Repeat("x", 10000),
			opts:    Options{MaxRecordSize: 1000},
			wantErr: "header: the first record is longer than 1000 bytes",
		},
		{name: "invalid utf-8 names the line", in: "a,b\n1,2\n3,Caf\xe9\n", wantErr: "line 3, cell 2: not valid utf-8 text"},
		{name: "invalid utf-8 in header", in: "a,\xff\n", wantErr: "line 1, cell 2"},
		{name: "invalid utf-8 in a multi-line field names its line", in: "a,b\n1,\"x\ny\"\n2,\"p\nq\xff\"\n", wantErr: "line 4"},
		{name: "bare quote names the line and the fix", in: "a,b\n1,2\n3,4 \"x\n", wantErr: `line 3, column 5: bare " in non-quoted-field: a cell that holds a quote must be quoted`},
		{name: "empty input", in: "", wantErr: "empty: no header row"},
		{name: "only a bom", in: "\xEF\xBB\xBF", wantErr: "empty: no header row"},
		{name: "utf-16", in: "\xFF\xFEa\x00", wantErr: "UTF-16"},
		// Without a byte-order mark UTF-16 used to be read as text with a
		// NUL in every other byte, and sent.
		{name: "utf-16le without a bom", in: utf16Text("id,town\r\n1,Cork\r\n", false), wantErr: "UTF-16"},
		{name: "utf-16be without a bom", in: utf16Text("id;town\n1;Dún Laoghaire\n", true), wantErr: "UTF-16"},
		{name: "utf-16 without a bom, windows-1252", in: utf16Text("id,town\n1,Cork\n", false), opts: Options{Encoding: record.EncodingWindows1252}, wantErr: "UTF-16"},
		{name: "utf-16 without a bom, one line", in: utf16Text("id", false), wantErr: "UTF-16"},
		{name: "utf-16 without a bom, cjk", in: utf16Text("编号,城市\n1,上海\n", false), wantErr: "UTF-16"},
		{
			name:       "nuls on both sides are not utf-16",
			in:         "id,town\n1,\x00\x01\x00\x01\x01\x00\x01\x00\n",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "\x00\x01\x00\x01\x01\x00\x01\x00"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "a stray nul is not utf-16",
			in:         "id,town\n1,Co\x00rk\n",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Co\x00rk"}},
			wantLines:  []int{2},
			wantDelim:  ',',
		},
		{
			name:       "excel's sep= line names the delimiter",
			in:         "sep=;\r\nid;town\r\n1;Cork, City\r\n",
			wantHeader: []string{"id", "town"},
			wantRows:   [][]string{{"1", "Cork, City"}},
			wantLines:  []int{3},
			wantDelim:  ';',
		},
		{name: "a sep= line alone", in: "sep=,\n", wantErr: "empty: no header row"},
		{name: "xlsx named csv", in: "PK\x03\x04rest", wantErr: "zip archive"},
		{name: "unknown encoding", in: "a\n", opts: Options{Encoding: "ebcdic"}, wantErr: "unknown encoding"},
		{name: "bad delimiter", in: "a\n", opts: Options{Delimiter: '"'}, wantErr: "invalid delimiter"},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			name := tt.name
			if oneByte {
				name += "/one byte reads"
			}
			t.Run(name, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tt.in)
				if oneByte {
					src = iotest.OneByteReader(src)
				}
				r, err := NewCSV(context.Background(), "in.csv", src, int64(len(tt.in)), tt.opts)
				var rows [][]string
				var lines []int
				if err == nil {
					defer r.Close()
					rows, lines, err = readAll(t, r)
				}
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Header(); !reflect.DeepEqual(got, tt.wantHeader) {
					t.Errorf("header = %q, want %q", got, tt.wantHeader)
				}
				if !reflect.DeepEqual(rows, tt.wantRows) {
					t.Errorf("rows = %q, want %q", rows, tt.wantRows)
				}
				if !reflect.DeepEqual(lines, tt.wantLines) {
					t.Errorf("lines = %v, want %v", lines, tt.wantLines)
				}
				if d := r.Info().Delimiter; d != tt.wantDelim {
					t.Errorf("delimiter = %q, want %q", d, tt.wantDelim)
				}
			})
		}
	}
}

// utf16Text encodes s as UTF-16 without a byte-order mark.
func utf16Text(s string, bigEndian bool) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

func TestCSVErrorsAreTyped(t *testing.T) {
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader("a\n\xff\n"), -1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next(context.Background())
	var ee *EncodingError
	if !errors.As(err, &ee) || ee.Line != 2 || ee.Column != 1 {
		t.Fatalf("error = %#v, want an *EncodingError on line 2", err)
	}
	if !strings.Contains(err.Error(), "--encoding windows-1252") {
		t.Errorf("error %q does not suggest the fix", err)
	}
}

func TestCSVLongRowsWarnOncePerRow(t *testing.T) {
	var logs bytes.Buffer
	in := "a,b\n1,2,3\n4,5\n6,7,8,9\n"
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader(in), -1, Options{Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(t, r); err != nil {
		t.Fatal(err)
	}
	got := strings.Count(logs.String(), "more cells than the header")
	if got != 2 {
		t.Errorf("%d warnings, want 2:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), `"line":4`) {
		t.Errorf("warning does not name line 4:\n%s", logs.String())
	}
}

func TestCSVWindows1252WarnsOnUTF8(t *testing.T) {
	var logs bytes.Buffer
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader("t\nDún\n"), -1,
		Options{Encoding: "windows-1252", Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !strings.Contains(logs.String(), "looks like UTF-8") {
		t.Errorf("no warning: %q", logs.String())
	}
}

func TestCSVProgress(t *testing.T) {
	in := "a,b\n" + strings.Repeat("1,2\n", 50000)
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader(in), int64(len(in)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	done, total := r.Progress()
	if total != int64(len(in)) || done <= 0 || done >= total {
		t.Errorf("progress after header = %d/%d, want part of %d", done, total, len(in))
	}
	if _, _, err := readAll(t, r); err != nil {
		t.Fatal(err)
	}
	if done, total := r.Progress(); done != total {
		t.Errorf("progress at end = %d/%d", done, total)
	}
}

func TestCSVContextCancelled(t *testing.T) {
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader("a\n1\n"), -1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
}

func TestCSVRowsAreOwned(t *testing.T) {
	r, err := NewCSV(context.Background(), "in.csv", strings.NewReader("a,b\n1,2\n3,4\n"), -1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := r.Next(context.Background())
	second, _ := r.Next(context.Background())
	if first.Cells[0] != "1" || second.Cells[0] != "3" {
		t.Errorf("rows share storage: %q %q", first.Cells, second.Cells)
	}
	first.Cells[0] = "changed"
	if r.Header()[0] != "a" || second.Cells[0] != "3" {
		t.Error("changing a row changed the reader's data")
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name      string
		path      string
		opts      Options
		wantDelim rune
		wantTotal int64
		wantErr   string
	}{
		{name: "csv", path: write("a.csv", "a;b\n1;2\n"), wantDelim: ';', wantTotal: 8},
		{name: "txt detects", path: write("a.txt", "a|b\n1|2\n"), wantDelim: '|', wantTotal: 8},
		{name: "tsv defaults to tab", path: write("a.tsv", "a,b\tc\n1,2\t3\n"), wantDelim: '\t', wantTotal: 12},
		{name: "upper-case extension", path: write("B.CSV", "a,b\n"), wantDelim: ',', wantTotal: 4},
		{name: "tsv with given delimiter", path: write("c.tsv", "a,b\tc\n"), opts: Options{Delimiter: ','}, wantDelim: ',', wantTotal: 6},
		{name: "stdin", path: "-", opts: Options{Stdin: strings.NewReader("a\tb\n")}, wantDelim: '\t', wantTotal: -1},
		{name: "stdin missing", path: "-", wantErr: "no standard input"},
		{name: "xls", path: write("a.xls", "x"), wantErr: "Excel 97-2003"},
		{name: "unknown extension", path: write("a.json", "{}"), wantErr: "unsupported input format"},
		{name: "missing file", path: filepath.Join(dir, "nope.csv"), wantErr: "no such file"},
		{name: "not a workbook", path: write("fake.xlsx", "a,b\n1,2\n"), wantErr: "not an XLSX workbook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(context.Background(), tt.path, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := r.Close(); err != nil {
					t.Error(err)
				}
				if err := r.Close(); err != nil {
					t.Errorf("second Close: %v", err)
				}
			}()
			if d := r.(Describer).Info(); d.Delimiter != tt.wantDelim || d.Format != FormatCSV {
				t.Errorf("info = %+v, want delimiter %q", d, tt.wantDelim)
			}
			if _, total := r.(ProgressReporter).Progress(); total != tt.wantTotal {
				t.Errorf("total = %d, want %d", total, tt.wantTotal)
			}
		})
	}
}

func TestOpenWarnsOfIgnoredOptions(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csvPath, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		opts Options
		want string
	}{
		{csvPath, Options{Sheet: "Customers"}, "--sheet is ignored"},
		{buildBook(t, dir), Options{Delimiter: ';'}, "--delimiter and --encoding are ignored"},
		{buildBook(t, dir), Options{Encoding: "windows-1252"}, "--delimiter and --encoding are ignored"},
		{buildBook(t, dir), Options{Encoding: "utf-8"}, ""},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		tt.opts.Logger = zerolog.New(&logs)
		r, err := Open(context.Background(), tt.path, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if (tt.want == "") != (logs.Len() == 0) || !strings.Contains(logs.String(), tt.want) {
			t.Errorf("%s %+v: logs %q, want %q", filepath.Base(tt.path), tt.opts, logs.String(), tt.want)
		}
	}
}

func TestOpenStdinFileHasSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Open(context.Background(), "-", Options{Stdin: f})
	if err != nil {
		t.Fatal(err)
	}
	if _, total := r.(ProgressReporter).Progress(); total != 8 {
		t.Errorf("total = %d, want 8", total)
	}
}

func TestDetectDelimiter(t *testing.T) {
	tests := []struct {
		sample   string
		complete bool
		want     rune
	}{
		{"", true, ','},
		{"a\n", true, ','},
		{"a,b,c", true, ','},
		{"a;b;c", true, ';'},
		{"a\tb", true, '\t'},
		{"a|b|c\n1|2|3", true, '|'},
		{"a,b;c\n1,2;3\n1,2,3;4\n", true, ';'},
		{"\n\n a;b\n", true, ';'},
		{"\"x,y,z\";b\n", true, ';'},
		// A truncated last line must not spoil consistency.
		{"a;b\n1;2\n3", false, ';'},
	}
	for _, tt := range tests {
		if got := detectDelimiter([]byte(tt.sample), tt.complete); got != tt.want {
			t.Errorf("detectDelimiter(%q) = %q, want %q", tt.sample, got, tt.want)
		}
	}
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n",
		"\xEF\xBB\xBF\"a\";b\r\n\"1\n2\";3\r\n",
		"a\tb\n1\t2\t3\n",
		"a|b\n\"x\"\"y\"|\n",
		"a,b\n1,\"2\n",
		"a\n\xff\n",
		"",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, cp1252 bool) {
		opts := Options{}
		if cp1252 {
			opts.Encoding = record.EncodingWindows1252
		}
		r, err := NewCSV(context.Background(), "fuzz", bytes.NewReader(in), int64(len(in)), opts)
		if err != nil {
			return
		}
		width := len(r.Header())
		lines := bytes.Count(in, []byte("\n")) + bytes.Count(in, []byte("\r")) + 1
		prevLine := 0
		for n := 1; n <= lines+1; n++ {
			row, err := r.Next(context.Background())
			if err != nil {
				if n > lines+1 {
					t.Fatalf("more rows than lines")
				}
				return
			}
			if row.Num != n || len(row.Cells) < width || row.Line <= prevLine {
				t.Fatalf("row %d: num %d, %d cells (header %d), line %d after %d", n, row.Num, len(row.Cells), width, row.Line, prevLine)
			}
			prevLine = row.Line
		}
		t.Fatalf("more rows than lines in %q", in)
	})
}
