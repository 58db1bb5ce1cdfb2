package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/childrun"
	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/sample_data/synth"
	"github.com/addrclean/addrclean/table"
	_ "github.com/addrclean/addrclean/table/postgres"
	_ "github.com/addrclean/addrclean/table/sqlite"
)

func main() {
	bin := flag.String("bin", "bin/addrclean", "addrclean binary to measure")
	rows := flag.Int("rows", 100000, "rows of the generated input")
	refSize := flag.Int("reference", 100000, "addresses in the generated reference")
	repeat := flag.Int("repeat", 3, "runs of each kind, taking turns; the fastest is shown")
	applyToo := flag.Bool("apply", false, "also measure addrclean apply over the outputs of the runs: files against tables")
	nightlyOnly := flag.Bool("nightly", false, "measure only a second, unchanged run over the PostgreSQL tables: rows updated, WAL bytes, wall")
	flag.Parse()
	run := run
	if *nightlyOnly {
		run = func(ctx context.Context, bin string, n, refSize, _ int, _ bool) error {
			return nightly(ctx, bin, n, refSize)
		}
	}
	if err := run(context.Background(), *bin, *rows, *refSize, *repeat, *applyToo); err != nil {
		fmt.Fprintln(os.Stderr, "benchdb:", err)
		os.Exit(1)
	}
}

// kind is one way of running addrclean: a name and its arguments.
type kind struct {
	name string
	args []string
}

type measurement struct {
	name      string
	rows      int
	wall, cpu time.Duration
	maxRSS    int64
}

// bench is what a measurement runs over: a directory with the generated
// reference and input, and a PostgreSQL server holding a database.
type bench struct {
	dir, refPath, in string
	header           []string
	srv              *pgtest.Server
	pgURL            string
}

// newBench writes the reference and n input rows into a temporary
// directory and starts a server with an empty database; close removes
// both.
func newBench(ctx context.Context, n, refSize int) (b *bench, err error) {
	b = &bench{}
	if b.dir, err = os.MkdirTemp("", "addrclean-benchdb-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	b.refPath = filepath.Join(b.dir, "reference.csv")
	refs, err := synth.WriteReference(b.refPath, synth.SampleSeed, refSize)
	if err != nil {
		return nil, err
	}
	b.in = filepath.Join(b.dir, "in.csv")
	if b.header, err = writeInput(b.in, refs, n); err != nil {
		return nil, err
	}
	if b.srv, err = pgtest.Start(ctx); err != nil {
		return nil, err
	}
	dbName, err := b.srv.NewDB(ctx)
	if err != nil {
		return nil, err
	}
	b.pgURL = b.srv.URL(pgtest.User, dbName)
	return b, nil
}

func (b *bench) close() {
	if b.srv != nil {
		_ = b.srv.Stop()
	}
	_ = os.RemoveAll(b.dir)
}

func run(ctx context.Context, bin string, n, refSize, repeat int, applyToo bool) error {
	b, err := newBench(ctx, n, refSize)
	if err != nil {
		return err
	}
	defer b.close()
	dir, refPath, in, pgURL := b.dir, b.refPath, b.in, b.pgURL
	liteURL := "sqlite:" + filepath.Join(dir, "crm.db")
	for _, u := range []string{pgURL, liteURL} {
		if err := load(ctx, u, in, b.header); err != nil {
			return err
		}
	}

	common := []string{"run", "--no-progress", "--log-format", "json", "--log-level", "warn", "--reference", refPath,
		"--id-col", "Customer ID"}
	kinds := []kind{
		{"CSV file -> CSV files", []string{"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in}},
		{"PostgreSQL table -> out-table + review-table", []string{"--table", "customers", "--out-table", "customers_av",
			"--review-table", "customers_review", pgURL}},
		{"SQLite table -> out-table + review-table (same file)", []string{"--table", "customers", "--out-table", "customers_av",
			"--review-table", "customers_review", liteURL}},
	}
	ms, err := fastest(ctx, bin, n, repeat, common, kinds)
	if err != nil {
		return err
	}
	printTable("run", ms)
	if !applyToo {
		return nil
	}
	// The review outputs are left undecided: every review row is written
	// as unresolved, and every input row is read, joined and written.
	applyCommon := []string{"apply", "--id-col", "Customer ID", "--table", "customers", "--out-table", "customers_av",
		"--review-table", "customers_review"}
	ms, err = fastest(ctx, bin, n, repeat, nil, []kind{
		{"CSV files -> CSV file", []string{"apply", "--enriched", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"),
			"-o", filepath.Join(dir, "final.csv")}},
		{"PostgreSQL tables -> final table", append(append([]string(nil), applyCommon...), "--final-table", "customers_final", pgURL)},
		{"SQLite tables -> final table (same file)", append(append([]string(nil), applyCommon...), "--final-table", "customers_final", liteURL)},
	})
	if err != nil {
		return err
	}
	printTable("apply", ms)
	return nil
}

// fastest runs each kind repeat times, taking turns, so that a busy spell
// of the machine does not fall on one kind only; the fastest run of each is
// kept.
func fastest(ctx context.Context, bin string, n, repeat int, common []string, kinds []kind) ([]measurement, error) {
	ms := make([]measurement, len(kinds))
	for i := 0; i < repeat; i++ {
		for j, k := range kinds {
			m, err := measure(ctx, bin, k.name, n, append(append([]string(nil), common...), k.args...)...)
			if err != nil {
				return nil, err
			}
			if i == 0 || m.wall < ms[j].wall {
				ms[j] = m
			}
		}
	}
	return ms, nil
}

// printTable writes the measurements as a Markdown table, the first kind the
// reference.
func printTable(what string, ms []measurement) {
	fmt.Printf("| %s | rows | wall | rows/s | vs CSV | CPU per row | peak RSS |\n", what)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		fmt.Printf("| %s | %d | %.2fs | %.0f | %+.0f%% | %.1f µs | %.0f MB |\n", m.name, m.rows, m.wall.Seconds(),
			float64(m.rows)/m.wall.Seconds(), 100*(ms[0].wall.Seconds()/m.wall.Seconds()-1),
			float64(m.cpu.Microseconds())/float64(m.rows), float64(m.maxRSS)/1e6)
	}
}

// measure runs the binary and measures it (internal/childrun: the peak RSS
// is the child's own, not this driver's). Exit 3 (some rows Error) is a finished
// run.
func measure(ctx context.Context, bin, name string, rows int, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	r, err := childrun.Run(ctx, cmd)
	if err != nil && cmd.ProcessState.ExitCode() != 3 {
		return measurement{}, fmt.Errorf("%s: %w\n%s", name, err, stderr.String())
	}
	return measurement{name: name, rows: rows, wall: r.Wall, cpu: r.CPU, maxRSS: r.PeakRSS}, nil
}

// writeInput writes n customers; row i takes reference i mod len(refs),
// with the street abbreviated on odd passes over the reference, so that
// rows stay distinct addresses and each costs a call.
func writeInput(path string, refs []gazetteer.Record, n int) ([]string, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	header := []string{"Customer ID", "Name", "Address 1", "Address 2", "Town", "County", "Postcode", "Country"}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	for i := range n {
		r := refs[i%len(refs)]
		street := strings.TrimSpace(r.BuildingNumber + " " + r.Street)
		if (i/len(refs))&1 == 1 {
			street = strings.Replace(street, " Street", " St", 1)
		}
		line1, line2 := street, r.Locality
		if r.BuildingName != "" {
			line1, line2 = r.BuildingName+", "+street, r.Locality
		}
		country := map[string]string{"IE": "Ireland", "GB": "United Kingdom"}[r.Country]
		if err := w.Write([]string{fmt.Sprintf("C%07d", i+1), "Customer", line1, line2, r.City, r.Region, r.Postcode, country}); err != nil {
			return nil, err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return header, f.Close()
}

func readCSV(path string, each func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	if _, err := r.Read(); err != nil {
		return err
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := each(rec); err != nil {
			return err
		}
	}
}

// load creates table customers in the database at url, every column text,
// and fills it with the rows of the CSV file in, 500 rows a statement.
func load(ctx context.Context, url, in string, header []string) error {
	db, err := openDB(ctx, url)
	if err != nil {
		return err
	}
	defer db.Close()
	var cols []string
	for _, h := range header {
		cols = append(cols, table.QuoteIdent(h)+" text")
	}
	if err := db.Exec(ctx, "CREATE TABLE customers ("+strings.Join(cols, ", ")+")"); err != nil {
		return err
	}
	var rows []string
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := db.Exec(ctx, "INSERT INTO customers VALUES "+strings.Join(rows, ", "))
		rows = rows[:0]
		return err
	}
	if err := readCSV(in, func(rec []string) error {
		vals := make([]string, len(rec))
		for i, c := range rec {
			vals[i] = "'" + strings.ReplaceAll(c, "'", "''") + "'"
		}
		if rows = append(rows, "("+strings.Join(vals, ", ")+")"); len(rows) == 500 {
			return flush()
		}
		return nil
	}); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return db.Exec(ctx, "ANALYZE customers")
}

// nightly runs the PostgreSQL table run twice over the same rows, the
// second as a nightly job would find them (nothing changed), and prints
// what the second wrote: rows updated (pg_stat_user_tables), WAL bytes
// (pg_current_wal_lsn before and after) and wall time, against the first.
func nightly(ctx context.Context, bin string, n, refSize int) error {
	b, err := newBench(ctx, n, refSize)
	if err != nil {
		return err
	}
	defer b.close()
	refPath, pgURL := b.refPath, b.pgURL
	if err := load(ctx, pgURL, b.in, b.header); err != nil {
		return err
	}
	db, err := openDB(ctx, pgURL)
	if err != nil {
		return err
	}
	defer db.Close()
	args := []string{"run", "--no-progress", "--log-format", "json", "--log-level", "warn", "--reference", refPath,
		"--id-col", "Customer ID", "--table", "customers", "--out-table", "customers_av", "--review-table", "customers_review", pgURL}
	first, err := measure(ctx, bin, "first run (tables created and filled)", n, args...)
	if err != nil {
		return err
	}
	// Rows updated are the tables' own statistics (n_tup_upd, flushed when
	// a run's sessions end), so that counting adds no work of its own.
	const state = `SELECT pg_current_wal_lsn()::text, coalesce(sum(n_tup_upd), 0)::text
		FROM pg_stat_user_tables WHERE relname IN ('customers_av', 'customers_review')`
	before, err := queryRow(ctx, db, state)
	if err != nil {
		return err
	}
	second, err := measure(ctx, bin, "second run (nothing changed)", n, args...)
	if err != nil {
		return err
	}
	after, err := queryRow(ctx, db, state)
	if err != nil {
		return err
	}
	cells, err := queryRow(ctx, db, fmt.Sprintf("SELECT (%s - %s)::text, pg_wal_lsn_diff('%s', '%s')::bigint::text",
		after[1], before[1], after[0], before[0]))
	if err != nil {
		return err
	}
	fmt.Println("| run | rows | wall | rows/s | CPU per row | rows updated | WAL bytes |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range []struct {
		m          measurement
		upd, bytes string
	}{{first, "-", "-"}, {second, cells[0], cells[1]}} {
		fmt.Printf("| %s | %d | %.2fs | %.0f | %.1f µs | %s | %s |\n", m.m.name, m.m.rows, m.m.wall.Seconds(),
			float64(m.m.rows)/m.m.wall.Seconds(), float64(m.m.cpu.Microseconds())/float64(m.m.rows), m.upd, m.bytes)
	}
	return nil
}

// openDB opens the database at url for the tool's own statements.
func openDB(ctx context.Context, url string) (table.Database, error) {
	u, err := table.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return table.Open(ctx, u, table.Options{})
}

// queryRow runs query and returns the cells of its first row.
func queryRow(ctx context.Context, db table.Database, query string) ([]string, error) {
	rows, err := db.Select(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Next(ctx)
}
