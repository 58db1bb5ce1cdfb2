package tabletest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/addrclean/addrclean/table"
)

// Runs tests the runs table of an out-table (table.RecordRun, table.Runs)
// against a real database: missing, then created on the first record,
// upserted by run id, the runs read back the last finished first, in schema (a
// PostgreSQL schema, or an SQLite database name such as main) and with a
// name that needs quoting.
func Runs(t *testing.T, h Harness, schema string) {
	ctx := context.Background()
	raw := h.NewDB(t)
	if schema != "" && schema != "main" {
		Exec(t, raw, "CREATE SCHEMA "+table.QuoteIdent(schema))
	}
	db := Open(t, raw, false)
	out := table.Name{Schema: schema, Table: `Av "Out"`}
	if _, err := runs(ctx, db, out); !errors.Is(err, table.ErrNoRuns) {
		t.Fatalf("Runs before any run: %v, want ErrNoRuns", err)
	}
	t0 := time.Date(2026, 11, 20, 7, 30, 0, 0, time.UTC)
	recorded := []table.Run{
		{ID: "a", Started: t0, Finished: t0.Add(time.Minute), Summary: []byte(`{"run":"a"}`)},
		{ID: "b", Started: t0.Add(time.Hour), Finished: t0.Add(time.Hour + time.Minute), Summary: []byte(`{"run":"b"}`)},
	}
	for _, r := range recorded {
		if err := table.RecordRun(ctx, db, out, r); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := runs(ctx, db, out); err != nil || !slices.Equal(got, []string{`{"run":"b"}`, `{"run":"a"}`}) {
		t.Fatalf("Runs = %q, %v; want b then a", got, err)
	}
	// The same run recorded again (a resumed run) replaces its row.
	recorded[0].Finished, recorded[0].Summary = t0.Add(2*time.Hour), []byte(`{"run":"a again"}`)
	if err := table.RecordRun(ctx, db, out, recorded[0]); err != nil {
		t.Fatal(err)
	}
	if got, err := runs(ctx, db, out); err != nil || !slices.Equal(got, []string{`{"run":"a again"}`, `{"run":"b"}`}) {
		t.Fatalf("Runs = %q, %v; want a again then b", got, err)
	}
	// A reader that stops after the first run ends the query.
	for s, err := range table.Runs(ctx, db, out) {
		if err != nil || string(s) != `{"run":"a again"}` {
			t.Fatalf("first of Runs = %s, %v", s, err)
		}
		break
	}
	ro := Open(t, raw, true)
	_, rows := ReadAll(t, ro, "SELECT run_id FROM "+table.RunsName(out).SQL()+" ORDER BY run_id")
	if len(rows) != 2 {
		t.Errorf("runs table rows %v, want a and b", rows)
	}
	cols, err := ro.Columns(ctx, table.RunsName(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]table.Type{"run_id": table.Text, "started": table.Timestamp, "finished": table.Timestamp, "summary": table.Text}
	for _, c := range cols {
		if w, ok := want[c.Name]; !ok || w != c.Type {
			t.Errorf("column %s %v; want %v", c.Name, c.Type, w)
		}
	}
}

// runs collects table.Runs.
func runs(ctx context.Context, db table.Database, out table.Name) ([]string, error) {
	var got []string
	for s, err := range table.Runs(ctx, db, out) {
		if err != nil {
			return got, err
		}
		got = append(got, string(s))
	}
	return got, nil
}
