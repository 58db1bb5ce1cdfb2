package writers

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
)

func TestFormatFromPath(t *testing.T) {
	tests := []struct {
		path    string
		want    Format
		wantErr string
	}{
		{"out.csv", CSV, ""},
		{"OUT.CSV", CSV, ""},
		{"dir.v2/out.tsv", CSV, ""},
		{"out.txt", CSV, ""},
		{"out.xlsx", XLSX, ""},
		{"out.jsonl", JSONL, ""},
		{"-", CSV, ""},
		{"out.xls", 0, `unknown extension ".xls"`},
		{"out.json", 0, `unknown extension ".json"`},
		{"out", 0, "has no extension"},
		{"", 0, "has no extension"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := FormatFromPath(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("FormatFromPath(%q) error = %v, want %q", tt.path, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FormatFromPath(%q) = %v, %v; want %v", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestDelimiter(t *testing.T) {
	tests := []struct {
		path  string
		delim rune
		want  rune
	}{
		{"a.csv", 0, ','},
		{"a.txt", 0, ','},
		{"a.tsv", 0, '\t'},
		{"a.TSV", 0, '\t'},
		{"a.tsv", ';', ';'},
		{"-", 0, ','},
		{"a.csv", '|', '|'},
	}
	for _, tt := range tests {
		if got := (Options{Delimiter: tt.delim}).delimiter(tt.path); got != tt.want {
			t.Errorf("delimiter(%q, %q) = %q, want %q", tt.path, tt.delim, got, tt.want)
		}
	}
}

func TestNeutralise(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=1+1", "'=1+1"},
		{"+353 1 234 5678", "'+353 1 234 5678"},
		{"-", "'-"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"-5", "-5"},
		{"+5", "+5"},
		{"-1.5e3", "-1.5e3"},
		{"-.5", "-.5"},
		{"-1e999", "'-1e999"}, // out of float64 range: not plainly a number
		{"-Inf", "'-Inf"},
		{"+NaN", "'+NaN"},
		{"-0x1p-2", "'-0x1p-2"},
		{"-1_000", "'-1_000"},
		{"-5 ", "'-5 "},
		{"--5", "'--5"},
		{" =1", " =1"}, // leading space: text to a spreadsheet
		{"'=1", "'=1"},
		{"a=1", "a=1"},
		{"\n=1", "\n=1"},
		{"＝1", "＝1"}, // full-width equals is not a formula
	}
	for _, tt := range tests {
		if got := neutralise(tt.in); got != tt.want {
			t.Errorf("neutralise(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLineSpans(t *testing.T) {
	tests := []struct {
		name  string
		pairs []int
		n     int
		want  []span
	}{
		{"none", nil, 5, nil},
		{"empty pair", []int{}, 5, nil},
		{"whole line", []int{0, 5}, 5, []span{{0, 5}}},
		{"inside", []int{1, 2}, 5, []span{{1, 3}}},
		{"zero length", []int{1, 0}, 5, nil},
		{"negative length", []int{1, -2}, 5, nil},
		{"past the end", []int{3, 10}, 5, []span{{3, 5}}},
		{"start at end", []int{5, 1}, 5, nil},
		{"start past end", []int{9, 1}, 5, nil},
		{"negative start", []int{-2, 4}, 5, []span{{0, 2}}},
		{"negative start, ends before 0", []int{-4, 2}, 5, nil},
		{"odd count", []int{0, 1, 3}, 5, []span{{0, 1}}},
		{"two pairs", []int{3, 1, 0, 1}, 5, []span{{0, 1}, {3, 4}}},
		{"overlapping", []int{0, 3, 2, 2}, 5, []span{{0, 4}}},
		{"touching", []int{0, 2, 2, 2}, 5, []span{{0, 4}}},
		{"contained", []int{0, 5, 1, 1}, 5, []span{{0, 5}}},
		{"empty line", []int{0, 1}, 0, nil},
		{"negative start on empty line", []int{-1, 2}, 0, nil},
		{"huge", []int{math.MaxInt, math.MaxInt}, 5, nil},
		{"huge length", []int{2, math.MaxInt}, 5, []span{{2, 5}}},
		{"min start", []int{math.MinInt, math.MaxInt}, 5, nil},
		{"min length", []int{0, math.MinInt}, 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lineSpans(tt.pairs, tt.n); !slices.Equal(got, tt.want) {
				t.Fatalf("lineSpans(%v, %d) = %v, want %v", tt.pairs, tt.n, got, tt.want)
			}
		})
	}
}

func TestBracketLabel(t *testing.T) {
	tests := []struct {
		name  string
		label []string
		hl    [][]int
		want  string
	}{
		{"no label", nil, [][]int{{0, 1}}, ""},
		{"no highlights", []string{"a b", "c"}, nil, "a b, c"},
		{"sample", []string{"1 Main St", "Dublin"}, [][]int{{}, {0, 6}}, "1 Main St, [Dublin]"},
		{"multi-byte", []string{"Dún Laoghaire"}, [][]int{{1, 1}}, "D[ú]n Laoghaire"},
		{"astral", []string{"a🏠b"}, [][]int{{1, 1}}, "a[🏠]b"},
		{"combining mark is its own character", []string{"e\u0301x"}, [][]int{{0, 1}}, "[e]\u0301x"},
		{"invalid byte counts as one", []string{"a\xffb"}, [][]int{{1, 1}}, "a[\xff]b"},
		{"more highlights than lines", []string{"ab"}, [][]int{{0, 1}, {0, 1}}, "[a]b"},
		{"adjacent lines", []string{"ab", "cd"}, [][]int{{1, 1}, {0, 1}}, "a[b], [c]d"},
		{"empty line", []string{"", "x"}, [][]int{{0, 1}, {0, 1}}, ", [x]"},
		{"brackets in text", []string{"[a]"}, [][]int{{1, 1}}, "[[a]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MarkChanges(tt.label, tt.hl); got != tt.want {
				t.Fatalf("MarkChanges = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONKeys(t *testing.T) {
	tests := []struct {
		header, want []string
	}{
		{nil, []string{}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"", "a", ""}, []string{"column_1", "a", "column_3"}},
		{[]string{"a", "a", "a"}, []string{"a", "a_2", "a_3"}},
		{[]string{"", "column_1"}, []string{"column_1", "column_1_2"}},
		{[]string{"a_2", "a", "a"}, []string{"a_2", "a", "a_3"}},
		{[]string{"a", "a_2", "a"}, []string{"a", "a_2", "a_3"}},
		{[]string{"x", "x_3", "x"}, []string{"x", "x_3", "x_3_3"}},
	}
	for _, tt := range tests {
		got := jsonKeys(tt.header)
		if !slices.Equal(got, tt.want) {
			t.Errorf("jsonKeys(%q) = %q, want %q", tt.header, got, tt.want)
		}
		seen := map[string]bool{}
		for _, k := range got {
			if seen[k] {
				t.Errorf("jsonKeys(%q): duplicate key %q", tt.header, k)
			}
			seen[k] = true
		}
	}
}

func TestActionAndNeedsReview(t *testing.T) {
	resp := func(a api.Action) *api.VerifyResponse { return &api.VerifyResponse{Action: a} }
	tests := []struct {
		name   string
		r      Result
		action string
		review bool
	}{
		{"accept", Result{Response: resp(api.ActionAccept)}, "Accept", false},
		{"suggest", Result{Response: resp(api.ActionSuggest)}, "Suggest", true},
		{"confirm", Result{Response: resp(api.ActionConfirm)}, "Confirm", true},
		{"reject", Result{Response: resp(api.ActionReject)}, "Reject", true},
		{"unknown action", Result{Response: resp("Later")}, "Later", true},
		{"no response", Result{}, "Error", true},
		{"error with response", Result{Err: "x", Response: resp(api.ActionAccept)}, "Error", true},
		{"cached accept", Result{Response: resp(api.ActionAccept), Cached: true}, "Accept", false},
	}
	for _, tt := range tests {
		if got := Action(tt.r); got != tt.action {
			t.Errorf("%s: Action = %q, want %q", tt.name, got, tt.action)
		}
		if got := NeedsReview(tt.r); got != tt.review {
			t.Errorf("%s: NeedsReview = %v, want %v", tt.name, got, tt.review)
		}
	}
}

func TestFormatCoord(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{53.3498053, "53.3498053"},
		{-6.2603097, "-6.2603097"},
		{0, "0"},
		{1e-7, "0.0000001"},
		{1e21, "1000000000000000000000"},
		{0.30000000000000004, "0.30000000000000004"},
		{math.NaN(), ""},
		{math.Inf(-1), ""},
	}
	for _, tt := range tests {
		if got := formatCoord(tt.v); got != tt.want {
			t.Errorf("formatCoord(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestCutUTF16(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  string
		cut   bool
	}{
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"ab🏠", 3, "ab", true}, // the emoji takes two units: not split
		{"ab🏠", 4, "ab🏠", false},
		{"é", 1, "é", false},
		{"a\xffb", 2, "a\xff", true},
	}
	for _, tt := range tests {
		got, cut := cutUTF16(tt.s, tt.limit)
		if got != tt.want || cut != tt.cut {
			t.Errorf("cutUTF16(%q, %d) = %q, %v; want %q, %v", tt.s, tt.limit, got, cut, tt.want, tt.cut)
		}
	}
}

func TestColumnIndexes(t *testing.T) {
	checks := []struct {
		cols []string
		i    int
		want string
	}{
		{EnrichedColumns, enAction, "av_action"},
		{EnrichedColumns, enLatitude, "av_latitude"},
		{EnrichedColumns, enLongitude, "av_longitude"},
		{EnrichedColumns, enError, "av_error"},
		{append(slices.Clone(EnrichedColumns), DuplicateColumns...), enDuplicate, "av_duplicates"},
		{append(slices.Clone(EnrichedColumns), DuplicateColumns...), enFirstRow, "av_first_row"},
		{EditColumns, 0, "edit_line1"},
		{EditColumns, 7, "edit_country"},
	}
	for _, c := range checks {
		if c.cols[c.i] != c.want {
			t.Errorf("column %d is %q, want %q", c.i, c.cols[c.i], c.want)
		}
	}
	l := newLayout(review, []string{"name", "id", "street"}, false, "id")
	for _, c := range []struct {
		i    int
		want string
	}{{l.action, "av_action"}, {l.matched, "matched_label"}, {l.decision, "decision"}, {l.inputLabel, "input_label"}} {
		if l.cols[c.i] != c.want {
			t.Errorf("review column %d is %q, want %q", c.i, l.cols[c.i], c.want)
		}
	}
	// EnrichedColumns and ReviewColumns are also the columns of table
	// sinks, which have no duplicate or decision columns.
	if len(EnrichedColumns) != 24 || len(ReviewColumns) != 6 || len(EditColumns) != 8 {
		t.Errorf("%d enriched and %d review columns", len(EnrichedColumns), len(ReviewColumns))
	}
}

// TestKeySetExtendsJSONKeys checks that keys added past the header are
// those jsonKeys gives the header widened with unnamed columns.
func TestKeySetExtendsJSONKeys(t *testing.T) {
	headers := [][]string{
		nil,
		{"a", "b"},
		{"column_3", "column_4_4"},
		{"", "column_1"},
		{"column_4", "x", "column_4"},
	}
	for _, h := range headers {
		var ks keySet
		for _, name := range h {
			ks.add(name)
		}
		for range 3 {
			ks.add("")
		}
		want := jsonKeys(append(slices.Clone(h), "", "", ""))
		if !slices.Equal(ks.keys, want) {
			t.Errorf("header %q widened by 3: keys %q, want %q", h, ks.keys, want)
		}
	}
}

// TestJSONLKeepsExtraCells checks that JSONL writes every cell of a row
// wider than the header, keyed as unnamed columns, in both outputs.
func TestJSONLKeepsExtraCells(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		want   []string // the "input" object of each row
	}{
		{
			name:   "one extra cell",
			header: []string{"id", "city"},
			rows:   [][]string{{"1", "Cork", "note"}},
			want:   []string{`{"id":"1","city":"Cork","column_3":"note"}`},
		},
		{
			name:   "rows of different widths",
			header: []string{"id", ""},
			rows:   [][]string{{"1"}, {"2", "b", "c", "d"}, {"3", "b"}, {"4", "b", "c"}},
			want: []string{
				`{"id":"1","column_2":""}`,
				`{"id":"2","column_2":"b","column_3":"c","column_4":"d"}`,
				`{"id":"3","column_2":"b"}`,
				`{"id":"4","column_2":"b","column_3":"c"}`,
			},
		},
		{
			name:   "header already holds the name",
			header: []string{"column_3", "column_3"},
			rows:   [][]string{{"a", "b", "c"}},
			want:   []string{`{"column_3":"a","column_3_2":"b","column_3_3":"c"}`},
		},
		{
			name:   "empty extra cells are kept too",
			header: []string{"a"},
			rows:   [][]string{{"x", "", ""}},
			want:   []string{`{"a":"x","column_2":"","column_3":""}`},
		},
	}
	for _, tt := range tests {
		for _, ctor := range []struct {
			name string
			new  constructor
		}{{"enriched", NewEnriched}, {"review", NewReview}} {
			t.Run(tt.name+"/"+ctor.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "out.jsonl")
				w, err := ctor.new(path, tt.header, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for i, cells := range tt.rows {
					if err := w.Write(context.Background(), Result{Row: i + 1, Cells: cells, Err: "e"}); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				if len(lines) != len(tt.want) {
					t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.want), data)
				}
				for i, line := range lines {
					if !json.Valid([]byte(line)) {
						t.Errorf("line %d is not JSON: %s", i+1, line)
					}
					if !strings.Contains(line, `"input":`+tt.want[i]+`,`) {
						t.Errorf("line %d = %s\nwant input %s", i+1, line, tt.want[i])
					}
				}
			})
		}
	}
}
