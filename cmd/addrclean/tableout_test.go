package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/table/sqlite"
)

// catalog is every relation of the database with its columns and types,
// and the rows of table data in a fixed order: what a refused run must
// leave exactly as it was.
func catalog(t *testing.T, dbURL, data string) string {
	t.Helper()
	_, rel := dbRows(t, dbURL, catalogQuery(dbURL))
	_, rows := dbRows(t, dbURL, "SELECT * FROM "+quoteIdent(data)+" ORDER BY 1")
	return fmt.Sprint(rel, rows)
}

// catalogQuery lists every relation of the database at dbURL with its
// columns and types, one row each (PostgreSQL: outside the system and
// temporary schemas; SQLite: sqlite_schema).
func catalogQuery(dbURL string) string {
	if strings.HasPrefix(dbURL, "sqlite:") {
		return `SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name`
	}
	return `SELECT n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' ||
		coalesce(string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		AND n.nspname NOT LIKE 'pg_temp%'
		GROUP BY n.nspname, c.relname, c.relkind ORDER BY 1`
}

// wantRefused runs addrclean run with args and wants exit 2 with every
// text of want in its messages, no call made, and the database at dbURL
// (its catalog and the rows of table data) as it was.
func wantRefused(t *testing.T, vc *verifyCounter, dbURL, data string, args, want []string) {
	t.Helper()
	before := catalog(t, dbURL, data)
	vc.reset()
	r := runDB(t, t.TempDir(), args...)
	msg := messages(r.stderr)
	if r.code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitUsage, tail(msg, 2000))
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("no %q in the message:\n%s", w, tail(msg, 2000))
		}
	}
	if after := catalog(t, dbURL, data); after != before {
		t.Errorf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
	if n := vc.calls.Load(); n != 0 {
		t.Errorf("%d calls made before the refusal", n)
	}
}

// TestRunTableNeverWritesInput: an output table that is the input under
// another spelling, or a table the input reads (through a --query or a
// view), or the input's table reached through --out-db, is refused with
// exit 2 naming both, before any change: the catalog and the input's rows
// are as they were, and no call was made.
func TestRunTableNeverWritesInput(t *testing.T) {
	isolateJournals(t)
	srv, vc := countingService(t)
	id := []string{"--base-url", srv.URL, "--country", "IE", "--id-col", "Customer ID"}
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			var dbURL, otherURL string
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
				otherURL = dbURL + "&connect_timeout=30" // the same database, spelled otherwise
			} else {
				dir := t.TempDir()
				dbURL = "sqlite:" + filepath.Join(dir, "crm.db")
				if err := os.Symlink(filepath.Join(dir, "crm.db"), filepath.Join(dir, "link.db")); err != nil {
					t.Fatal(err)
				}
				otherURL = "sqlite:" + filepath.Join(dir, "link.db")
			}
			loadSample(t, dbURL, "cc")
			dbExec(t, dbURL, `CREATE VIEW ccv AS SELECT * FROM cc WHERE "Town" <> ''`)
			dbExec(t, dbURL, `CREATE VIEW avx_runs AS SELECT * FROM cc`)
			cases := []struct {
				name string
				args []string
				want []string
			}{
				{"schema-qualified", []string{"--table", "cc", "--out-table", map[string]string{"postgres": "public.cc", "sqlite": "main.cc"}[kind]},
					[]string{"--out-table", ".cc", "--table cc", "never written"}},
				{"review table", []string{"--table", "cc", "--out-table", "av", "--review-table", "CC"},
					// PostgreSQL reads the quoted CC as another table: refused as one
					// whose name differs from an existing table's only in case.
					map[string][]string{"sqlite": {"--review-table CC", "never written"}, "postgres": {"--review-table CC", "public.cc does"}}[kind]},
				{"query", []string{"--query", `select * from cc where "Town" <> 'x'`, "--out-table", "cc"},
					[]string{"--out-table cc", "read by the input (--query)", "never written"}},
				{"view as input", []string{"--table", "ccv", "--out-table", "cc"}, []string{"--out-table cc", "--table ccv", "never written"}},
				{"query of a view", []string{"--query", "SELECT * FROM ccv", "--out-table", "cc"}, []string{"--out-table cc", "--query", "never written"}},
				{"out-db is the input's", []string{"--table", "cc", "--out-table", "cc", "--out-db", otherURL}, []string{"cc", "never written"}},
				// The runs table beside the out-table is an output too.
				{"runs table", []string{"--table", "avx_runs", "--out-table", "avx"}, []string{"avx_runs", "never written"}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					wantRefused(t, vc, dbURL, "cc", append(append(slices.Clone(id), c.args...), dbURL), c.want)
				})
			}
		})
	}
}

// TestRunTableOutputsOneTable: an --out-table and a --review-table that
// are one table under two spellings (a schema, the case SQLite ignores)
// are refused before any change, whether the table exists or not: the
// review's upserts and deletes used to go into the enriched rows.
func TestRunTableOutputsOneTable(t *testing.T) {
	isolateJournals(t)
	srv, vc := countingService(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			var dbURL, schema string
			if kind == "postgres" {
				dbURL, schema = pgtest.RequireDB(t), "public"
			} else {
				dbURL, schema = "sqlite:"+filepath.Join(t.TempDir(), "crm.db"), "main"
			}
			loadSample(t, dbURL, "cc")
			dbExec(t, dbURL, `CREATE TABLE old ("Customer ID" text PRIMARY KEY)`)
			for _, c := range [][2]string{{"av", schema + ".av"}, {"old", schema + ".old"}, {"av", "av_runs"}} {
				args := []string{"--base-url", srv.URL, "--country", "IE", "--id-col", "Customer ID", "--table", "cc",
					"--out-table", c[0], "--review-table", c[1], dbURL}
				t.Run(c[0]+" "+c[1], func(t *testing.T) {
					wantRefused(t, vc, dbURL, "cc", args, []string{"--review-table " + c[1], "same table"})
				})
			}
			if kind == "sqlite" {
				args := []string{"--base-url", srv.URL, "--country", "IE", "--id-col", "Customer ID", "--table", "cc",
					"--out-table", "av", "--review-table", "AV", dbURL}
				wantRefused(t, vc, dbURL, "cc", args, []string{"--review-table AV", "same table"})
			}
		})
	}
}

// TestRunTableChecksBeforeChanges: an output table that cannot take what
// the run writes is refused before the first call and the first DDL, the
// refusal naming the table and column; the database is as it was.
func TestRunTableChecksBeforeChanges(t *testing.T) {
	isolateJournals(t)
	srv, vc := countingService(t)
	ctx := context.Background()
	pg := pgtest.Require(t)
	name, err := pg.NewDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pgURL := pg.URL(pgtest.User, name)
	loadSample(t, pgURL, "customers")
	dbExec(t, pgURL,
		`CREATE TABLE narrow ("Customer ID" text PRIMARY KEY, av_action varchar(5))`,
		`CREATE TABLE intcoord ("Customer ID" text PRIMARY KEY, av_latitude integer)`,
		`CREATE TABLE flagtext ("Customer ID" text PRIMARY KEY, av_label boolean)`,
		`CREATE TABLE nokey ("Customer ID" text, av_action text)`,
		`CREATE TABLE stray ("Customer ID" text PRIMARY KEY, av_score text)`,
		`CREATE TABLE required ("Customer ID" text PRIMARY KEY, note text NOT NULL)`,
		`CREATE TABLE intkey ("Customer ID" bigint PRIMARY KEY)`,
		`CREATE VIEW aview AS SELECT "Customer ID" FROM customers`)
	// A table this user may read but not write, owned by the superuser.
	su, err := pgx.Connect(ctx, pg.URL("postgres", name))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	for _, s := range []string{`CREATE TABLE locked ("Customer ID" text PRIMARY KEY)`, `GRANT SELECT ON locked TO ` + pgtest.User,
		`CREATE SCHEMA closed`, `CREATE SCHEMA readonly`, `GRANT USAGE ON SCHEMA readonly TO ` + pgtest.User} {
		if _, err := su.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	liteURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, liteURL, "customers")
	dbExec(t, liteURL, `CREATE TABLE nokey ("Customer ID" TEXT, av_action TEXT)`,
		`CREATE TABLE numeric ("Customer ID" TEXT PRIMARY KEY, av_postcode NUMERIC)`,
		`CREATE TABLE intkey ("Customer ID" INTEGER PRIMARY KEY)`)

	for _, c := range []struct {
		db, out string
		want    []string
	}{
		{pgURL, "narrow", []string{"--out-table narrow", "av_action", "character varying(5)"}},
		{pgURL, "intcoord", []string{"av_latitude", "integer"}},
		{pgURL, "flagtext", []string{"av_label", "boolean"}},
		{pgURL, "nokey", []string{"nokey", "not unique"}},
		{pgURL, "stray", []string{"av_score"}},
		{pgURL, "required", []string{"note", "NOT NULL"}},
		// The ids are text (C01001): refused when the batch was written,
		// after the calls, with the run stopped.
		{pgURL, "intkey", []string{"--out-table intkey", `"Customer ID"`, "bigint"}},
		{pgURL, "aview", []string{"not a table"}},
		{pgURL, "locked", []string{"--out-table locked", "INSERT"}},
		{pgURL, "closed.av", []string{"--out-table closed.av", "schema closed"}},
		{pgURL, "nowhere.av", []string{"no schema nowhere"}},
		{pgURL, "readonly.av", []string{"--out-table readonly.av", "may not create it"}},
		// PostgreSQL cuts a name to 63 bytes: two spellings (av…x and
		// av…y; the out-table and its runs table av…_runs) would be one
		// table, and the review's deletes would empty the enriched rows.
		{pgURL, strings.Repeat("a", 64), []string{"--out-table " + strings.Repeat("a", 64), "63 bytes"}},
		{pgURL, strings.Repeat("a", 60), []string{"runs table " + strings.Repeat("a", 60) + "_runs", "63 bytes"}},
		{liteURL, "nokey", []string{"nokey", "not unique"}},
		{liteURL, "numeric", []string{"av_postcode", "NUMERIC"}},
		{liteURL, "intkey", []string{"--out-table intkey", `"Customer ID"`, "INTEGER"}},
	} {
		t.Run(strings.SplitN(c.db, ":", 2)[0]+" "+c.out, func(t *testing.T) {
			wantRefused(t, vc, c.db, "customers", []string{"--base-url", srv.URL, "--country", "IE", "--table", "customers",
				"--id-col", "Customer ID", "--out-table", c.out, c.db}, c.want)
		})
	}
}

// TestRunTableSecondRunWritesNothing: a re-run whose verdicts are the same
// (from the cache) updates no row, as a trigger counting UPDATEs shows, and
// says so in the summary; where there is no value the tables hold NULL,
// never an empty string.
func TestRunTableSecondRunWritesNothing(t *testing.T) {
	isolateJournals(t)
	srv, _ := countingService(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			var dbURL string
			trigger := func(tab string) []string {
				return []string{fmt.Sprintf(`CREATE TRIGGER count_%s AFTER UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION count_update()`, tab, tab)}
			}
			setup := []string{`CREATE TABLE updates (n integer)`, `INSERT INTO updates VALUES (0)`,
				`CREATE FUNCTION count_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE updates SET n = n + 1; RETURN NULL; END $$`}
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
			} else {
				dbURL = "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
				setup = setup[:2]
				trigger = func(tab string) []string {
					return []string{fmt.Sprintf(`CREATE TRIGGER count_%s AFTER UPDATE ON %s BEGIN UPDATE updates SET n = n + 1; END`, tab, tab)}
				}
			}
			n := loadSample(t, dbURL, "customers")
			cache := filepath.Join(t.TempDir(), "cache.db")
			args := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", cache, "--table", "customers",
				"--id-col", "Customer ID", "--out-table", "av", "--review-table", "rv", dbURL}
			first := runDB(t, t.TempDir(), args...)
			wantExit(t, first, exitOK, exitRowErrors)
			_, rv := dbRows(t, dbURL, "SELECT count(*) FROM rv")
			if got := fmt.Sprint(first.summary["tables"]); !strings.Contains(got, fmt.Sprintf("inserted:%d table:table av unchanged:0 updated:0", n)) ||
				!strings.Contains(got, fmt.Sprintf("inserted:%s table:table rv unchanged:0 updated:0", rv[0][0])) {
				t.Errorf("first run's tables %s", got)
			}
			// NULL for no value, in every column of both tables.
			for _, q := range []string{
				`SELECT count(*) FROM av WHERE av_error = '' OR av_line2 = '' OR av_message = '' OR av_address_id = ''`,
				`SELECT count(*) FROM rv WHERE av_error = '' OR av_address_id = '' OR matched_label = '' OR av_message = ''`,
			} {
				if _, rows := dbRows(t, dbURL, q); rows[0][0] != "0" {
					t.Errorf("%s: %s rows hold an empty string", q, rows[0][0])
				}
			}
			if _, rows := dbRows(t, dbURL, `SELECT count(*) FROM av WHERE av_error IS NULL`); rows[0][0] == "0" {
				t.Error("no NULL av_error")
			}

			dbExec(t, dbURL, append(append(setup, trigger("av")...), trigger("rv")...)...)
			second := runDB(t, t.TempDir(), args...)
			wantExit(t, second, exitOK, exitRowErrors)
			if _, rows := dbRows(t, dbURL, "SELECT n FROM updates"); rows[0][0] != "0" {
				t.Errorf("the second run updated %s rows, want 0", rows[0][0])
			}
			if got := fmt.Sprint(second.summary["tables"]); !strings.Contains(got, fmt.Sprintf("deleted:0 inserted:0 table:table av unchanged:%d updated:0", n)) {
				t.Errorf("second run's tables %s", got)
			}
		})
	}
}

// TestRunTableLockTimeout: a set-up that cannot have its lock within
// --lock-timeout stops with exit 1 naming the table and the statement,
// before any call, instead of waiting without a word.
func TestRunTableLockTimeout(t *testing.T) {
	isolateJournals(t)
	srv, vc := countingService(t)
	ctx := context.Background()
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	dbExec(t, dbURL, `CREATE TABLE av ("Customer ID" text PRIMARY KEY, av_action text)`)
	holder, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE av IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	r := runDB(t, t.TempDir(), "--base-url", srv.URL, "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-table", "av", "--lock-timeout", "200ms", dbURL)
	msg := messages(r.stderr)
	if r.code != exitFatal {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitFatal, tail(msg, 2000))
	}
	for _, w := range []string{"table av", "ALTER TABLE", "waited more than 200ms for a lock"} {
		if !strings.Contains(msg, w) {
			t.Errorf("no %q in the message:\n%s", w, tail(msg, 2000))
		}
	}
	if n := vc.calls.Load(); n != 0 {
		t.Errorf("%d calls made", n)
	}
	if _, cols := dbRows(t, dbURL, `SELECT count(*) FROM pg_attribute WHERE attrelid = 'av'::regclass AND attnum > 0`); cols[0][0] != "2" {
		t.Errorf("av has %s columns: the failed set-up changed it", cols[0][0])
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// A lock taken after the set-up stops the first write the same way.
	args := []string{"--country", "IE", "--table", "customers", "--id-col", "Customer ID", "--out-table", "av", "--lock-timeout", "200ms", dbURL}
	wantExit(t, runDB(t, t.TempDir(), args...), exitOK, exitRowErrors)
	tx, err = holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE av IN SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	r = runDB(t, t.TempDir(), args...)
	msg = messages(r.stderr)
	if r.code != exitFatal {
		t.Fatalf("write under a held lock: exit %d, want %d:\n%s", r.code, exitFatal, tail(msg, 2000))
	}
	for _, w := range []string{"table av", "INSERT ... ON CONFLICT DO UPDATE", "waited more than 200ms for a lock"} {
		if !strings.Contains(msg, w) {
			t.Errorf("no %q in the message:\n%s", w, tail(msg, 2000))
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// An input locked by a migration (ALTER TABLE) stops the read the same
	// way, before any call; it used to wait as long as the lock was held.
	tx, err = holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE customers IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	vc.reset()
	// The bound only keeps a failing test from hanging while the lock is held.
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r = runDBContext(t, rctx, t.TempDir(), append([]string{"--base-url", srv.URL}, args...)...)
	msg = messages(r.stderr)
	if r.code != exitFatal {
		t.Fatalf("read under a held lock: exit %d, want %d:\n%s", r.code, exitFatal, tail(msg, 2000))
	}
	for _, w := range []string{"table customers", "reading the input", "waited more than 200ms for a lock"} {
		if !strings.Contains(msg, w) {
			t.Errorf("no %q in the message:\n%s", w, tail(msg, 2000))
		}
	}
	if n := vc.calls.Load(); n != 0 {
		t.Errorf("%d calls made", n)
	}
}

// TestRunTableSecrets: a password with an unescaped '@' is refused showing
// no part of it; a password in the URL is warned about; driver errors of
// several shapes show no password.
func TestRunTableSecrets(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	noServer := strings.Replace(dbURL, "host=/", "host=/nonexistent/", 1)
	base := []string{"--country", "IE", "--table", "customers", "--id-col", "Customer ID", "--out-table", "av"}
	for _, c := range []struct {
		name, url string
		code      int
		want      string
		secrets   []string
	}{
		{"unescaped @", "postgres://crm:abc@XYZsecretTail@127.0.0.1:1/crm", exitFatal, "write it as %40", []string{"XYZsecretTail", "abc@"}},
		{"unescaped @ with a path", "postgres://crm:p@ss/word@127.0.0.1/crm?sslmode=disable", exitFatal, "%40", []string{"ss/word", "p@ss"}},
		{"escaped @, no server", strings.Replace(noServer, pgtest.Password, "Tail%40Secret9", 1), exitFatal, "connecting to",
			[]string{"Tail@Secret9", "Tail%40Secret9", "Secret9"}},
		{"password parameter, no server", strings.Replace(noServer, ":"+pgtest.Password, "", 1) + "&password=ParamSecret7", exitFatal,
			"connecting to", []string{"ParamSecret7"}},
		{"password in the URL", dbURL, exitOK, "put it in PGPASSWORD or ~/.pgpass", []string{pgtest.Password}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runDB(t, t.TempDir(), append(slices.Clone(base), c.url)...)
			msg := messages(r.stderr)
			if r.code != c.code && !(c.code == exitOK && r.code == exitRowErrors) {
				t.Fatalf("exit %d, want %d:\n%s", r.code, c.code, tail(msg, 2000))
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("no %q in:\n%s", c.want, tail(msg, 2000))
			}
			for _, s := range c.secrets {
				if strings.Contains(r.stderr+r.stdout+r.enriched, s) {
					t.Errorf("%q shows:\n%s", s, tail(r.stderr, 2000))
				}
			}
		})
	}
}

// TestRunTableConcurrentFirstRuns: runs started together against a
// database without their tables all succeed: the set-ups are serialised,
// not raced on the catalog. (On main, four rounds failed with
// "duplicate key value violates unique constraint pg_type_typname_nsp_index".)
func TestRunTableConcurrentFirstRuns(t *testing.T) {
	isolateJournals(t)
	// The race is in the set-up, before the first row: a hundred rows keep
	// the runs overlapping through it, and through their writes and
	// closes, at a fifth of the sample's cost.
	const runs, rounds, n = 6, 4, 100
	for range rounds {
		dbURL := pgtest.RequireDB(t)
		loadSample(t, dbURL, "customers")
		codes := make(chan runResult, runs)
		for i := range runs {
			go func() {
				dir := filepath.Join(t.TempDir(), strconv.Itoa(i))
				_ = os.MkdirAll(dir, 0o755)
				codes <- runDB(t, dir, "--country", "IE", "--journal", "off", "--limit", strconv.Itoa(n), "--table", "customers", "--id-col", "Customer ID",
					"--out-table", "av", "--review-table", "rv", dbURL)
			}()
		}
		for range runs {
			r := <-codes
			if r.code != exitRowErrors && r.code != exitOK {
				t.Errorf("exit %d:\n%s", r.code, tail(messages(r.stderr), 2000))
			}
		}
		if _, rows := dbRows(t, dbURL, "SELECT count(*) FROM av"); rows[0][0] != strconv.Itoa(n) {
			t.Errorf("%s rows in av, want %d", rows[0][0], n)
		}
	}
}

// TestApplyFinalTableIdentity: apply's --final-table may be none of the
// tables the command reads (the input, through a view or a --query, the
// run's out-table or review table), whatever the spelling; the refusal
// changes nothing.
func TestApplyFinalTableIdentity(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			dbExec(t, dbURL, `CREATE VIEW cv AS SELECT * FROM customers`)
			r := runDB(t, t.TempDir(), "--country", "IE", "--limit", "20", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "av", "--review-table", "rv", dbURL)
			wantExit(t, r, exitOK, exitRowErrors)
			schema := map[bool]string{true: "main", false: "public"}[strings.HasPrefix(dbURL, "sqlite:")]
			for _, tc := range []struct {
				input []string
				final string
				want  string
			}{
				{[]string{"--table", "customers"}, schema + ".customers", "never written"},
				{[]string{"--table", "cv"}, "customers", "never written"},
				{[]string{"--query", "SELECT * FROM customers"}, schema + ".customers", "read by the input"},
				{[]string{"--table", "customers"}, schema + ".av", "the run's --out-table"},
				{[]string{"--table", "customers"}, schema + ".rv", "the run's --review-table"},
			} {
				t.Run(tc.final+" "+tc.input[1], func(t *testing.T) {
					before := catalog(t, dbURL, "customers")
					code, _, stderr := cli(append(append([]string{"apply", dbURL}, tc.input...), "--id-col", "Customer ID", "--country", "IE",
						"--out-table", "av", "--review-table", "rv", "--final-table", tc.final)...)
					if code != exitUsage || !strings.Contains(stderr, tc.want) {
						t.Fatalf("exit %d, want 2 with %q:\n%s", code, tc.want, stderr)
					}
					if after := catalog(t, dbURL, "customers"); after != before {
						t.Errorf("the database changed:\nbefore %s\nafter  %s", before, after)
					}
				})
			}
			// A final table of its own is written, NULL where there is no value.
			code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
				"--out-table", "av", "--review-table", "rv", "--final-table", "final")
			if code != exitOK && code != exitRowErrors {
				t.Fatalf("apply: exit %d\n%s", code, stderr)
			}
			cols := `final_line1 = '' OR final_line2 = '' OR final_line3 = '' OR final_line4 = '' OR final_city = '' OR
				final_region = '' OR final_postcode = '' OR final_country = ''`
			if _, rows := dbRows(t, dbURL, "SELECT count(*) FROM final WHERE "+cols); rows[0][0] != "0" {
				t.Errorf("%s final rows hold an empty string", rows[0][0])
			}
			if _, rows := dbRows(t, dbURL, "SELECT count(*) FROM final WHERE final_line2 IS NULL"); rows[0][0] == "0" {
				t.Error("no NULL final_line2")
			}
		})
	}
}

// TestRunTableDryRunNoOutput: --dry-run over a table needs no output, and a
// run with no review output has no review line in its summary.
func TestRunTableDryRunNoOutput(t *testing.T) {
	isolateJournals(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	n := loadSample(t, dbURL, "customers")
	r := runDB(t, t.TempDir(), "--dry-run", "--country", "IE", "--table", "customers", "--id-col", "Customer ID", dbURL)
	wantExit(t, r, exitOK)
	if !strings.Contains(r.stdout, fmt.Sprintf("data rows:   %d", n)) {
		t.Fatalf("dry run:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID", "--out-table", "av", dbURL)
	wantExit(t, r, exitOK, exitRowErrors)
	if strings.Contains(r.stderr, `"review":`) {
		t.Errorf("the summary names a review output there is none of:\n%s", tail(r.stderr, 1500))
	}
	var text strings.Builder
	o := runOptions{input: "x"}
	printSummary(&text, false, zerolog.Nop(), o, runstats.Stats{}, "table av", "", true)
	if strings.Contains(text.String(), "review") {
		t.Errorf("text summary with an empty review line:\n%s", text.String())
	}
}

// TestRunTableVerifiedAtFromCache: an answer from the cache is written with
// the time it was obtained, not the time of the run that reused it.
func TestRunTableVerifiedAtFromCache(t *testing.T) {
	isolateJournals(t)
	srv, vc := countingService(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
			}
			n := loadSample(t, dbURL, "customers")
			cache := filepath.Join(t.TempDir(), "cache.db")
			run := func(out string) {
				t.Helper()
				r := runDB(t, t.TempDir(), "--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", cache,
					"--table", "customers", "--id-col", "Customer ID", "--out-table", out, dbURL)
				wantExit(t, r, exitOK, exitRowErrors)
			}
			stamp := func(at time.Time) string { return at.UTC().Format(sqlite.TimeFormat) }
			start := time.Now()
			run("av1")
			between := time.Now()
			vc.reset()
			run("av2")
			if c := vc.calls.Load(); c != 0 {
				t.Fatalf("the second run made %d calls: not all from the cache", c)
			}
			q := fmt.Sprintf(`SELECT count(*) FROM av2 WHERE av_action <> 'Error' AND (verified_at < '%s' OR verified_at > '%s')`,
				stamp(start.Add(-time.Millisecond)), stamp(between))
			if _, rows := dbRows(t, dbURL, q); rows[0][0] != "0" {
				_, all := dbRows(t, dbURL, `SELECT min(verified_at), max(verified_at) FROM av2`)
				t.Errorf("%s of %d rows answered from the cache have a verified_at outside the first run (%s .. %s): %v",
					rows[0][0], n, stamp(start), stamp(between), all)
			}
		})
	}
}
