package tabletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/writers"
)

// runSuite runs the suite of sources and sinks.
func runSuite(t *testing.T, h Harness) {
	t.Run("Source", func(t *testing.T) { testSource(t, h) })
	t.Run("SourceErrors", func(t *testing.T) { testSourceErrors(t, h) })
	t.Run("SourceNeverWrites", func(t *testing.T) { testNeverWrites(t, h) })
	t.Run("SourceStreams", func(t *testing.T) { testStreams(t, h) })
	t.Run("SinkEnriched", func(t *testing.T) { testSinkEnriched(t, h) })
	t.Run("SinkReview", func(t *testing.T) { testSinkReview(t, h) })
	t.Run("SinkReviewDecisions", func(t *testing.T) { testSinkReviewDecisions(t, h) })
	t.Run("SinkDuplicates", func(t *testing.T) { testSinkDuplicates(t, h) })
	t.Run("SinkExisting", func(t *testing.T) { testSinkExisting(t, h) })
	t.Run("SinkAbort", func(t *testing.T) { testSinkAbort(t, h) })
	t.Run("SinkBatchRefused", func(t *testing.T) { testSinkBatchRefused(t, h) })
}

func customers(t *testing.T, h Harness, url string) {
	ty := h.Types
	Exec(t, url,
		fmt.Sprintf(`CREATE TABLE "Customers" (id %s, "Full Name" %s, line1 %s, active %s, score %s, seen %s)`,
			ty["int"], ty["text"], ty["text"], ty["bool"], ty["float"], ty["timestamp"]),
		`INSERT INTO "Customers" VALUES (3, 'Cara', '3 Quay St', NULL, 2.5, NULL)`,
		`INSERT INTO "Customers" VALUES (1, 'Aoife', '1 Main St', true, 0.1, '2024-03-01 10:00:00')`,
		`INSERT INTO "Customers" VALUES (2, NULL, '2 High St', false, -17, NULL)`,
	)
}

func testSource(t *testing.T, h Harness) {
	url := h.NewDB(t)
	customers(t, h, url)
	db := Open(t, url, true)
	ctx := context.Background()
	n := table.Name{Table: "Customers"}
	cols, err := db.Columns(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	if want := []string{"id", "Full Name", "line1", "active", "score", "seen"}; !slices.Equal(names, want) {
		t.Fatalf("columns %q, want %q", names, want)
	}
	if cols[0].Type != table.Integer {
		t.Errorf("id is %v, want integer", cols[0].Type)
	}
	header, rows := ReadAll(t, db, table.TableQuery(n, "", "id"))
	if !slices.Equal(header, names) {
		t.Fatalf("header %q, want %q", header, names)
	}
	want := [][]string{
		{"1", "Aoife", "1 Main St", "true", "0.1", "2024-03-01 10:00:00"},
		{"2", "", "2 High St", "false", "-17", ""},
		{"3", "Cara", "3 Quay St", "", "2.5", ""},
	}
	for i := range want {
		if i >= len(rows) || !slices.Equal(rows[i][:5], want[i][:5]) || !strings.HasPrefix(rows[i][5], want[i][5]) {
			t.Fatalf("rows\n%q\nwant (ordered by id, NULL as empty)\n%q", rows, want)
		}
	}
	_, rows = ReadAll(t, db, table.TableQuery(n, "score > 0 OR id = 2", "id"))
	if len(rows) != 3 {
		t.Fatalf("--where with OR: %d rows, want 3", len(rows))
	}
	_, rows = ReadAll(t, db, table.TableQuery(n, "score > 1", "id"))
	if len(rows) != 1 || rows[0][0] != "3" {
		t.Fatalf("--where score > 1: %q", rows)
	}
}

func testSourceErrors(t *testing.T, h Harness) {
	url := h.NewDB(t)
	customers(t, h, url)
	db := Open(t, url, true)
	ctx := context.Background()
	// A kind whose names ignore case (SQLite) finds it; one that matches
	// quoted names exactly (PostgreSQL) names the right spelling.
	_, err := db.Columns(ctx, table.Name{Table: "customers"})
	if err != nil && (!errors.Is(err, table.ErrNoTable) || !strings.Contains(err.Error(), "Customers")) {
		t.Errorf("a table named in the wrong case: %v; want ErrNoTable naming the right spelling", err)
	}
	_, err = db.Columns(ctx, table.Name{Table: "nope"})
	if !errors.Is(err, table.ErrNoTable) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing table: %v", err)
	}
	for _, c := range []struct {
		query string
		want  error
	}{
		{"SELECT * FROM nope", table.ErrNoTable},
		{`SELECT nope FROM "Customers"`, table.ErrNoColumn},
		{"SELEC 1", table.ErrBadQuery},
	} {
		_, err := table.OpenSource(ctx, db, c.query, "test")
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.query, err, c.want)
		}
	}
}

func testNeverWrites(t *testing.T, h Harness) {
	url := h.NewDB(t)
	customers(t, h, url)
	// Even through a handle that may write, a source cannot.
	db := Open(t, url, false)
	ctx := context.Background()
	src, err := table.OpenSource(ctx, db, `DELETE FROM "Customers" RETURNING *`, "test")
	if err == nil {
		for {
			if _, err = src.Next(ctx); err != nil {
				break
			}
		}
		src.Close()
	}
	_, rows := ReadAll(t, db, `SELECT * FROM "Customers"`)
	if len(rows) != 3 {
		t.Fatalf("a DELETE given as the query removed rows: %d left", len(rows))
	}
}

func testStreams(t *testing.T, h Harness) {
	url := h.NewDB(t)
	n := 2*h.FetchRows + 7
	Exec(t, url, fmt.Sprintf("CREATE TABLE big (id %s, v %s)", h.Types["int"], h.Types["text"]),
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO big SELECT %d - i, 'v' || i FROM s`, n, n+1))
	db := Open(t, url, true)
	_, rows := ReadAll(t, db, table.TableQuery(table.Name{Table: "big"}, "", "id"))
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r[0] != fmt.Sprint(i+1) {
			t.Fatalf("row %d has id %s: not in id order", i+1, r[0])
		}
	}
}

// Results for sinks: Accept, Suggest and Error rows, ids in cell 0.
func response(action api.Action, line string) *api.VerifyResponse {
	return &api.VerifyResponse{
		Action: action,
		Form:   api.Form{Message: api.Message{Value: "Address verified"}},
		Information: api.Information{Status: api.StatusVerified, MatchLevel: api.LevelBuilding, Complete: true,
			CityAmended: action == api.ActionSuggest},
		Address: api.MatchedAddress{
			ID: "IE-" + line, Lines: []api.Line{{Key: "AddressLine1", Value: line}},
			City: &api.Value{Value: "Dublin"}, Country: &api.Country{Value: "Ireland", ISO: "IE"},
			Label: []string{line, "Dublin"},
		},
		Data: api.Data{Location: &api.Location{Latitude: 53.3498053, Longitude: -6.2603097, Accuracy: "BUILDING"}},
	}
}

func result(row int, id string, action api.Action, line string) writers.Result {
	r := writers.Result{Row: row, Cells: []string{id, line}, InputLabel: line}
	if action == "" {
		r.Err = "no address"
		return r
	}
	r.Response = response(action, line)
	return r
}

func sink(t *testing.T, db table.Database, name string, k table.Kind, at time.Time, log *bytes.Buffer, batch int) *table.Sink {
	t.Helper()
	s, err := table.NewSink(context.Background(), db, table.Name{Table: name}, name, table.SinkOptions{
		Kind: k, Key: "id", KeyType: table.Integer, KeyIndex: 0, RunTime: at, BatchRows: batch,
		Logger: zerolog.New(log),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func write(t *testing.T, s *table.Sink, rs ...writers.Result) {
	t.Helper()
	for _, r := range rs {
		if err := s.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func testSinkEnriched(t *testing.T, h Harness) {
	url := h.NewDB(t)
	db := Open(t, url, false)
	ctx := context.Background()
	t1 := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	var log bytes.Buffer
	write(t, sink(t, db, "av", table.Enriched, t1, &log, 2),
		result(1, "10", api.ActionAccept, "1 Main St"),
		result(2, "20", "", ""),
		result(3, " 30 ", api.ActionSuggest, "3 Quay St"),
		result(4, "", api.ActionAccept, "no id"),
	)
	if !strings.Contains(log.String(), "no id") {
		t.Errorf("a row without an id was not reported: %s", log.String())
	}
	cols, err := db.Columns(ctx, table.Name{Table: "av"})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]table.Type{}
	for _, c := range cols {
		types[c.Name] = c.Type
	}
	for name, want := range map[string]table.Type{"id": table.Integer, "av_complete": table.Bool, "av_city_amended": table.Bool,
		"av_latitude": table.Float, "av_longitude": table.Float, "av_action": table.Text, table.VerifiedAt: table.Timestamp,
		table.InputLabel: table.Text} {
		if types[name] != want {
			t.Errorf("column %s is %v, want %v", name, types[name], want)
		}
	}
	q := "SELECT id, av_action, av_complete, av_city_amended, av_latitude, av_error, verified_at FROM av ORDER BY id"
	_, rows := ReadAll(t, db, q)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (the row without an id is left out): %q", len(rows), rows)
	}
	if rows[0][1] != "Accept" || rows[0][2] != "true" || rows[0][3] != "false" || rows[0][4] != "53.3498053" {
		t.Errorf("row 10: %q", rows[0])
	}
	if rows[1][1] != "Error" || rows[1][2] != "" || rows[1][4] != "" || rows[1][5] != "no address" {
		t.Errorf("row 20 (Error: NULL booleans and coordinates): %q", rows[1])
	}
	if rows[2][0] != "30" || rows[2][3] != "true" {
		t.Errorf("row 30 (id trimmed): %q", rows[2])
	}
	if !strings.HasPrefix(rows[0][6], "2025-01-02") || !strings.Contains(rows[0][6], "03:04:05.123456") {
		t.Errorf("verified_at %q, want the run's time to the microsecond", rows[0][6])
	}

	// A second run updates in place: no duplicate, new values.
	t2 := t1.Add(24 * time.Hour)
	write(t, sink(t, db, "av", table.Enriched, t2, &log, 100),
		result(1, "10", api.ActionSuggest, "1 Main Street"),
		result(2, "20", api.ActionAccept, "20 Fixed Rd"),
	)
	_, rows = ReadAll(t, db, "SELECT id, av_action, av_line1, verified_at FROM av ORDER BY id")
	if len(rows) != 3 {
		t.Fatalf("after a re-run: %d rows, want 3: %q", len(rows), rows)
	}
	if rows[0][1] != "Suggest" || rows[0][2] != "1 Main Street" || !strings.HasPrefix(rows[0][3], "2025-01-03") {
		t.Errorf("row 10 not updated: %q", rows[0])
	}
	if rows[2][1] != "Suggest" || !strings.HasPrefix(rows[2][3], "2025-01-02") {
		t.Errorf("row 30, not in the second run, changed: %q", rows[2])
	}
}

func testSinkReview(t *testing.T, h Harness) {
	url := h.NewDB(t)
	db := Open(t, url, false)
	t1 := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	write(t, sink(t, db, "rv", table.Review, t1, &log, 0),
		result(1, "1", api.ActionAccept, "1 Main St"),
		result(2, "2", api.ActionSuggest, "2 Main St"),
		result(3, "3", "", ""),
	)
	_, rows := ReadAll(t, db, "SELECT id, av_action, matched_label, input_label, av_error FROM rv ORDER BY id")
	want := [][]string{{"2", "Suggest", "2 Main St, Dublin", "2 Main St", ""}, {"3", "Error", "", "", "no address"}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("review rows %q, want %q", rows, want)
	}
	// Row 2 was fixed: the next run takes it out of the review table.
	write(t, sink(t, db, "rv", table.Review, t1.Add(time.Hour), &log, 0),
		result(1, "2", api.ActionAccept, "2 Main Street"),
	)
	_, rows = ReadAll(t, db, "SELECT id FROM rv ORDER BY id")
	if fmt.Sprint(rows) != "[[3]]" {
		t.Fatalf("after row 2 was accepted: %q, want only 3", rows)
	}
}

// testSinkReviewDecisions: a nightly re-run keeps what a person recorded in
// the review table while the row's input address (and, for accept, the
// service's address) is the one decided on, and clears it otherwise.
func testSinkReviewDecisions(t *testing.T, h Harness) {
	url := h.NewDB(t)
	db := Open(t, url, false)
	t1 := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	var first []writers.Result
	for i, line := range []string{"1 A St", "2 B St", "3 C St", "4 D St", "5 E St", "6 F St"} {
		first = append(first, result(i+1, fmt.Sprint(i+1), api.ActionSuggest, line))
	}
	write(t, sink(t, db, "rv", table.Review, t1, &log, 0), first...)
	_, rows := ReadAll(t, db, "SELECT id, decision, edit_line1, edit_country FROM rv ORDER BY id")
	if len(rows) != 6 || rows[0][1] != "" || rows[0][2] != "" {
		t.Fatalf("new review rows: %q, want 6 with empty decision and edit_ columns", rows)
	}
	Exec(t, url,
		`UPDATE rv SET decision = 'edit', edit_line1 = '1 A Street', edit_country = 'IE' WHERE id = 1`,
		`UPDATE rv SET decision = ' Accept' WHERE id = 2`,
		`UPDATE rv SET decision = 'keep' WHERE id IN (3, 4, 6)`,
		`UPDATE rv SET decision = 'edit', edit_line1 = '5 E Street' WHERE id = 5`)

	moved := result(4, "4", api.ActionSuggest, "4 D St")
	moved.Response.Address.Label = []string{"4 D Street", "Dublin"} // another suggestion, same input
	acc := result(2, "2", api.ActionSuggest, "2 B St")
	acc.Response.Address.Label = []string{"2 B Street", "Dublin"}
	write(t, sink(t, db, "rv", table.Review, t1.Add(24*time.Hour), &log, 0),
		result(1, "1", api.ActionSuggest, "1 A St"), // unchanged: kept
		acc, // accept of another suggestion: cleared
		result(3, "3", api.ActionSuggest, "3 C Street"), // the input changed: cleared
		moved, // keep of an unchanged input: kept
		result(5, "5", api.ActionAccept, "5 E St"),  // accepted now: leaves the review
		result(6, "6", api.ActionConfirm, "6 F St"), // another action, same input: kept
	)
	_, rows = ReadAll(t, db, "SELECT id, decision, edit_line1, edit_country, input_label, matched_label FROM rv ORDER BY id")
	want := [][]string{
		{"1", "edit", "1 A Street", "IE", "1 A St", "1 A St, Dublin"},
		{"2", "", "", "", "2 B St", "2 B Street, Dublin"},
		{"3", "", "", "", "3 C Street", "3 C Street, Dublin"},
		{"4", "keep", "", "", "4 D St", "4 D Street, Dublin"},
		{"6", "keep", "", "", "6 F St", "6 F St, Dublin"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after the re-run:\n got %q\nwant %q", rows, want)
	}
}

func testSinkDuplicates(t *testing.T, h Harness) {
	url := h.NewDB(t)
	db := Open(t, url, false)
	var log bytes.Buffer
	// Batches of 2: a duplicate in the same batch and one across batches.
	write(t, sink(t, db, "av", table.Enriched, time.Now(), &log, 2),
		result(1, "7", api.ActionAccept, "first"),
		result(2, "7", api.ActionAccept, "second"),
		result(3, "8", api.ActionAccept, "x"),
		result(4, "7", api.ActionSuggest, "third"),
		result(5, "9", api.ActionAccept, "y"),
	)
	_, rows := ReadAll(t, db, "SELECT id, av_line1 FROM av ORDER BY id")
	if fmt.Sprint(rows) != "[[7 third] [8 x] [9 y]]" {
		t.Fatalf("rows %q: want the last row of id 7", rows)
	}
	if !strings.Contains(log.String(), `"rows":2`) || !strings.Contains(log.String(), "repeat the id") {
		t.Errorf("want a warning counting 2 repeated ids; log: %s", log.String())
	}
}

func testSinkExisting(t *testing.T, h Harness) {
	url := h.NewDB(t)
	Exec(t, url,
		fmt.Sprintf("CREATE TABLE av (id %s PRIMARY KEY, av_action %s, note %s)", h.Types["text"], h.Types["text"], h.Types["text"]),
		"INSERT INTO av (id, av_action, note) VALUES ('k1', 'old', 'kept')",
		fmt.Sprintf("CREATE TABLE nokey (id %s, av_action %s)", h.Types["text"], h.Types["text"]),
		fmt.Sprintf("CREATE TABLE other (ref %s PRIMARY KEY)", h.Types["text"]),
	)
	db := Open(t, url, false)
	var log bytes.Buffer
	// Missing av_ columns are added, other columns are left alone.
	s, err := table.NewSink(context.Background(), db, table.Name{Table: "av"}, "av", table.SinkOptions{
		Kind: table.Enriched, Key: "id", KeyType: table.Integer, KeyIndex: 0, RunTime: time.Now(),
		MarkCached: true, Logger: zerolog.New(&log),
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, result(1, "k1", api.ActionAccept, "1 Main St"), result(2, "k2", api.ActionAccept, "2 Main St"))
	_, rows := ReadAll(t, db, "SELECT id, av_action, note, av_cached FROM av ORDER BY id")
	if len(rows) != 2 || rows[0][1] != "Accept" || rows[0][2] != "kept" || rows[1][2] != "" {
		t.Fatalf("rows %q", rows)
	}
	_, err = table.NewSink(context.Background(), db, table.Name{Table: "nokey"}, "nokey", table.SinkOptions{Key: "id", RunTime: time.Now()})
	if !errors.Is(err, table.ErrBadQuery) || !strings.Contains(err.Error(), "unique") {
		t.Errorf("a key column that is not unique: %v", err)
	}
	_, err = table.NewSink(context.Background(), db, table.Name{Table: "other"}, "other", table.SinkOptions{Key: "id", RunTime: time.Now()})
	if !errors.Is(err, table.ErrNoColumn) || !strings.Contains(err.Error(), `"id"`) {
		t.Errorf("a table without the key column: %v", err)
	}
}

func testSinkAbort(t *testing.T, h Harness) {
	url := h.NewDB(t)
	db := Open(t, url, false)
	var log bytes.Buffer
	s := sink(t, db, "av", table.Enriched, time.Now(), &log, 2)
	for i := 1; i <= 3; i++ {
		if err := s.Write(context.Background(), result(i, fmt.Sprint(i), api.ActionAccept, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	if err := s.Write(context.Background(), result(4, "4", api.ActionAccept, "x")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	// The full batch was committed; the row of the unfinished one is not.
	_, rows := ReadAll(t, db, "SELECT id FROM av ORDER BY id")
	if fmt.Sprint(rows) != "[[1] [2]]" {
		t.Fatalf("after Abort: %q, want the committed batch only", rows)
	}
}

// testSinkBatchRefused: a batch the database refuses (here a CHECK of the
// table's own) is named by its rows: the write that reports it is of a
// later row, since one batch is written while the next fills.
func testSinkBatchRefused(t *testing.T, h Harness) {
	url := h.NewDB(t)
	Exec(t, url, fmt.Sprintf("CREATE TABLE av (id %s PRIMARY KEY, av_action %s CHECK (av_action <> 'Reject'))",
		h.Types["int"], h.Types["text"]))
	db := Open(t, url, false)
	var log bytes.Buffer
	s := sink(t, db, "av", table.Enriched, time.Now(), &log, 2)
	err := s.Write(context.Background(), result(3, "3", api.ActionAccept, "x"))
	for i := 4; err == nil && i <= 9; i++ {
		action := api.ActionAccept
		if i == 5 {
			action = api.ActionReject
		}
		err = s.Write(context.Background(), result(i, fmt.Sprint(i), action, "x"))
	}
	if err == nil {
		err = s.Close()
	} else {
		_ = s.Abort()
	}
	if err == nil || !strings.Contains(err.Error(), "rows 5 to 6") {
		t.Fatalf("a refused batch: %v; want the error naming its rows 5 to 6", err)
	}
}
