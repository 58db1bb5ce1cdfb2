package cache

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// TestDBPeek: Peek reads a file's namespace and writes nothing: not the
// label of the namespace there (edited by hand to "x"), not a namespace
// that is not there, which answers nothing (nil). The file's bytes and its
// WAL are as they were.
func TestDBPeek(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	there, absent := LiveNamespace("https://api.example.com", "k"), LiveNamespace("https://other.example.com", "k")
	fileWithAnswer(t, path, there, "1 main street", "A1")
	filetest.Exec(t, path, "UPDATE cache_namespaces SET label = 'x'")
	before := filetest.Sums(t, path)

	d, err := Open(path, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	checkPeek(t, there, absent, func(ns Namespace) (getter, error) {
		if st, err := d.Peek(ctx, ns, time.Hour); st != nil || err != nil {
			return st, err
		}
		return nil, nil
	})
	if _, err := d.Peek(ctx, there, 0); err == nil {
		t.Error("Peek with no time to live: no error")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if after := filetest.Sums(t, path); after != before {
		t.Errorf("Peek changed the file: %s, was %s", after, before)
	}
}

// getter is the Get of what Peek returns.
type getter interface {
	Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error)
}

// checkPeek checks that peek of the namespace there answers the answer A1
// put under "1 main street", and that peek of absent, which is not there,
// is nil.
func checkPeek(t *testing.T, there, absent Namespace, peek func(Namespace) (getter, error)) {
	t.Helper()
	for _, tc := range []struct {
		ns   Namespace
		want string // the answer's id, "" for none
	}{{there, "A1"}, {absent, ""}} {
		g, err := peek(tc.ns)
		switch {
		case err != nil:
			t.Fatal(err)
		case tc.want == "" && g != nil:
			t.Errorf("Peek of a namespace not there: %v, want nil", g)
		case tc.want != "" && g == nil:
			t.Errorf("Peek(%s): nil", tc.ns.Label)
		case tc.want != "":
			resp, ok, err := g.Get(context.Background(), "1 main street")
			if err != nil || !ok || resp.Address.ID != tc.want {
				t.Errorf("Peek(%s).Get = %v, %v, %v; want %s", tc.ns.Label, resp, ok, err, tc.want)
			}
		}
	}
}

// TestPGMissingTables: a shared cache lacking some of its tables (here
// cache_claims, then cache_answers) is not completed by an open that must
// create nothing: MustExist refuses it (ErrNotExist, naming the tables),
// ReadOnly reads what is there (a missing table of the answers answers
// nothing), refuses Store and, through the server, any write. A run's open
// then creates the missing tables.
func TestPGMissingTables(t *testing.T) {
	ctx := context.Background()
	url, open := pgCache(t)
	there, absent := LiveNamespace("https://api.example.com", "k"), LiveNamespace("https://other.example.com", "k")
	if err := open(t).Put(ctx, "1 main street", answerID("A1")); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	state := func() string {
		t.Helper()
		var s string
		err := conn.QueryRow(ctx, `SELECT (SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE schemaname = current_schema())
			|| ' / ' || (SELECT string_agg(id || '=' || label, ' ' ORDER BY id) FROM cache_namespaces)`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	exec("DROP TABLE cache_claims")
	exec("UPDATE cache_namespaces SET label = 'x'")
	before := state()

	_, err = OpenPG(ctx, url, "the cache", PGOptions{MustExist: true})
	if !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "cache_claims") {
		t.Errorf("MustExist without cache_claims: %v, want ErrNotExist naming it", err)
	}

	p, err := OpenPG(ctx, url, "the cache", PGOptions{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkPeek(t, there, absent, func(ns Namespace) (getter, error) {
		if r, err := p.Peek(ctx, ns, time.Hour); r != nil || err != nil {
			return r, err
		}
		return nil, nil
	})
	if _, err := p.Store(there, time.Hour); err == nil {
		t.Error("Store of a read-only cache: no error")
	}
	if _, err := p.pool.Exec(ctx, "INSERT INTO cache_namespaces VALUES ('live-1', 'y')"); err == nil {
		t.Error("a write through a read-only cache's connection: no error")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if after := state(); after != before {
		t.Errorf("a read-only open changed the database: %s, was %s", after, before)
	}

	exec("DROP TABLE cache_answers")
	p, err = OpenPG(ctx, url, "the cache", PGOptions{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := p.Peek(ctx, there, time.Hour); r != nil || err != nil {
		t.Errorf("Peek without cache_answers: %v, %v; want nothing", r, err)
	}
	_ = p.Close()

	// A run creates what is missing.
	p, err = OpenPG(ctx, url, "the cache", PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := state(); !strings.Contains(got, "cache_answers cache_claims") {
		t.Errorf("a run's open did not create the missing tables: %s", got)
	}
	s, err := p.Store(there, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(ctx, "1 main street"); ok || err != nil {
		t.Errorf("Get after cache_answers was created: %v, %v; want a miss", ok, err)
	}
}

// fileWithAnswer makes a cache file at path holding one answer (id) of ns
// for key, closed.
func fileWithAnswer(t *testing.T, path string, ns Namespace, key, id string) {
	t.Helper()
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Store(ns, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), key, answerID(id)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
