package cache

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// TestPeekAnswersWithoutNamespaceRow: answers whose cache_namespaces row is
// gone (deleted by hand; no key ties them) are hits of the run's Store,
// which adds the row again: Peek answers them too, so that a dry run's
// calls_to_pay stays the run's calls_made.
func TestPeekAnswersWithoutNamespaceRow(t *testing.T) {
	ctx := context.Background()
	ns := LiveNamespace("https://api.example.com", "k")
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.db")
		fileWithAnswer(t, path, ns, "1 main street", "A1")
		filetest.Exec(t, path, "DELETE FROM cache_namespaces")
		d, err := Open(path, Options{MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		p, err := d.Peek(ctx, ns, time.Hour)
		if err != nil || p == nil {
			t.Fatalf("Peek: %v, %v; want the namespace's answers", p, err)
		}
		if _, ok, err := p.Get(ctx, "1 main street"); !ok || err != nil {
			t.Errorf("Peek.Get: %v, %v; want the answer the run finds", ok, err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		url, open := pgCache(t)
		if err := open(t).Put(ctx, "1 main street", answerID("A1")); err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DELETE FROM cache_namespaces"); err != nil {
			t.Fatal(err)
		}
		p, err := OpenPG(ctx, url, "the cache", PGOptions{MustExist: true, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		r, err := p.Peek(ctx, ns, time.Hour)
		if err != nil || r == nil {
			t.Fatalf("Peek: %v, %v; want the namespace's answers", r, err)
		}
		if _, ok, err := r.Get(ctx, "1 main street"); !ok || err != nil {
			t.Errorf("Peek.Get: %v, %v; want the answer the run finds", ok, err)
		}
		_ = p.Close()

		// Without the table itself: the run creates it, and finds the
		// answers.
		if _, err := conn.Exec(ctx, "DROP TABLE cache_namespaces"); err != nil {
			t.Fatal(err)
		}
		p, err = OpenPG(ctx, url, "the cache", PGOptions{MustExist: true, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err = p.Peek(ctx, ns, time.Hour)
		if err != nil || r == nil {
			t.Fatalf("Peek without cache_namespaces: %v, %v; want the namespace's answers", r, err)
		}
		if _, ok, err := r.Get(ctx, "1 main street"); !ok || err != nil {
			t.Errorf("Peek.Get without cache_namespaces: %v, %v; want the answer the run finds", ok, err)
		}
		_ = p.Close()
		if _, ok, err := open(t).Get(ctx, "1 main street"); !ok || err != nil {
			t.Errorf("the run's Get: %v, %v; want a hit", ok, err)
		}
	})
}
