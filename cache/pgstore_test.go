package cache

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/pgtest"
)

// pgCache opens a fresh database as a shared cache, for one runner; open
// opens the same database for another.
func pgCache(t testing.TB) (url string, open func(t testing.TB) *PGStore) {
	t.Helper()
	srv := pgtest.Require(t)
	db, err := srv.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	url = srv.URL(pgtest.User, db)
	return url, func(t testing.TB) *PGStore {
		t.Helper()
		// A lease of an hour: renewals never run within a test, and an
		// expired claim is made by hand.
		p, err := OpenPG(context.Background(), url, "postgres://app@/"+db, PGOptions{Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		s, err := p.Store(LiveNamespace("https://api.example.com", "k"), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func answerID(id string) *api.VerifyResponse {
	r, err := api.DecodeVerifyResponse([]byte(`{"type":"verify","action":"Accept","address":{"id":"` + id + `","label":["1 Main Street","Cork"]}}`))
	if err != nil {
		panic(err)
	}
	return r
}

// waitSignal makes Get say when it starts waiting for another runner.
func waitSignal(t *testing.T) <-chan string {
	ch := make(chan string, 16)
	onWait = func(key string) { ch <- key }
	t.Cleanup(func() { onWait = nil })
	return ch
}

type got struct {
	resp *api.VerifyResponse
	ok   bool
	err  error
}

func getAsync(s *PGStore, key string) <-chan got {
	ch := make(chan got, 1)
	go func() {
		r, ok, err := s.Get(context.Background(), key)
		ch <- got{r, ok, err}
	}()
	return ch
}

// TestPGClaims: one runner's miss claims the request; a second runner asking
// for it meanwhile waits, and gets the first one's answer when it is put, or
// the claim when it is released or its lease has run out (a killed runner).
func TestPGClaims(t *testing.T) {
	for _, end := range []string{"put", "release", "lease expired", "lease renewed"} {
		t.Run(end, func(t *testing.T) {
			url, open := pgCache(t)
			a, b := open(t), open(t)
			waiting := waitSignal(t)
			const key = "1 main street\x00\x01cork\x01\x01ie\x01"
			if _, ok, err := a.Get(context.Background(), key); ok || err != nil {
				t.Fatalf("first Get: hit %v, %v", ok, err)
			}
			if end == "lease renewed" {
				// A call that outlasts its lease keeps its claim: the
				// runner's renewal gives it a lease from now (here, of one
				// that had run out), and the other runner waits.
				mustExec(t, sqlConn(t, url), "UPDATE cache_claims SET expires = clock_timestamp() - interval '1 second'")
				if err := renew(a.p); err != nil {
					t.Fatal(err)
				}
				end = "put"
			}
			res := getAsync(b, key)
			select {
			case k := <-waiting:
				if k != key {
					t.Fatalf("waited for %q", k)
				}
			case r := <-res:
				t.Fatalf("the second runner did not wait for the claim: hit %v, %v", r.ok, r.err)
			}
			switch end {
			case "put":
				if err := a.Put(context.Background(), key, answerID("A1")); err != nil {
					t.Fatal(err)
				}
			case "release":
				if err := a.Release(context.Background(), key); err != nil {
					t.Fatal(err)
				}
			default:
				conn := sqlConn(t, url)
				mustExec(t, conn, "UPDATE cache_claims SET expires = clock_timestamp() - interval '1 second'")
			}
			r := <-res
			if r.err != nil {
				t.Fatal(r.err)
			}
			if end == "put" {
				if !r.ok || r.resp.Address.ID != "A1" {
					t.Fatalf("the waiting runner got %v, %+v; want A1's answer", r.ok, r.resp)
				}
				if b.Waited() != 1 {
					t.Fatalf("Waited %d", b.Waited())
				}
				return
			}
			if r.ok {
				t.Fatal("a hit with no answer stored")
			}
			if want := int64(map[bool]int{true: 1}[end == "lease expired"]); b.TakenOver() != want {
				t.Fatalf("TakenOver %d, want %d", b.TakenOver(), want)
			}
			// The second runner holds the claim now: the first one waits.
			res = getAsync(a, key)
			<-waiting
			if err := b.Put(context.Background(), key, answerID("B1")); err != nil {
				t.Fatal(err)
			}
			if r := <-res; !r.ok || r.resp.Address.ID != "B1" {
				t.Fatalf("the first runner got %v, %+v, %v; want B1's answer", r.ok, r.resp, r.err)
			}
		})
	}
}

// TestPGGetPutExpiry: answers are shared between runners in a namespace, not
// across namespaces, and expire with the time to live.
func TestPGGetPutExpiry(t *testing.T) {
	url, open := pgCache(t)
	a := open(t)
	ctx := context.Background()
	if _, ok, _ := a.Get(ctx, "k1"); ok {
		t.Fatal("hit in an empty cache")
	}
	if err := a.Put(ctx, "k1", answerID("A1")); err != nil {
		t.Fatal(err)
	}
	b := open(t)
	// Peek claims nothing: a's next Get of another key is a miss it may
	// pay for, b's Peek of it too, and b's Get does not wait.
	if _, ok, err := b.Peek(ctx, "k0"); ok || err != nil {
		t.Fatalf("Peek of a missing key: %v %v", ok, err)
	}
	if _, ok, err := b.Get(ctx, "k0"); ok || err != nil || b.Waited() != 0 {
		t.Fatalf("Get after a Peek: %v %v, waited %d", ok, err, b.Waited())
	}
	if r, ok, err := a.Peek(ctx, "k1"); !ok || err != nil || r.Address.ID != "A1" {
		t.Fatalf("Peek of a stored key: %+v %v %v", r, ok, err)
	}
	// The read-only view neither waits for b's claim on k0 nor stores.
	ro := a.ReadOnly()
	if _, ok, err := ro.Get(ctx, "k0"); ok || err != nil || a.Waited() != 0 {
		t.Fatalf("read-only Get of a claimed key: %v %v, waited %d", ok, err, a.Waited())
	}
	if err := ro.Put(ctx, "k9", answerID("A9")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Peek(ctx, "k9"); ok {
		t.Fatal("the read-only view stored an answer")
	}
	// Has answers as Peek does, many keys in one query, claiming nothing.
	if has, err := ro.Has(ctx, []string{"k1", "k0", "k9", "k1"}); err != nil || !slices.Equal(has, []bool{true, false, false, true}) {
		t.Fatalf("read-only Has = %v, %v", has, err)
	}
	r, at, ok, err := b.GetAt(ctx, "k1")
	if err != nil || !ok || r.Address.ID != "A1" || time.Since(at) > time.Minute {
		t.Fatalf("second runner: %+v %v %v %v", r, at, ok, err)
	}
	// The answer is made two hours old in the table (PostgreSQL cannot be
	// in a synctest bubble, and the cache reads time.Now).
	age(t, sqlConn(t, url), 2*time.Hour)
	p, err := OpenPG(ctx, url, "x", PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	late, _ := p.Store(LiveNamespace("https://api.example.com", "k"), time.Hour)
	if _, ok, _ := late.Get(ctx, "k1"); ok {
		t.Fatal("an answer older than the time to live was a hit")
	}
	other, _ := p.Store(LiveNamespace("https://api.example.com", "another key"), 24*time.Hour)
	if _, ok, _ := other.Get(ctx, "k1"); ok {
		t.Fatal("an answer crossed namespaces")
	}
	st, err := p.Stats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 1 || len(st.Namespaces) != 2 || st.Size == 0 {
		t.Fatalf("stats %+v", st)
	}
	pr, err := p.Prune(context.Background(), time.Hour)
	if err != nil || pr.Expired != 1 {
		t.Fatalf("prune %+v %v", pr, err)
	}
	if err := a.Put(ctx, "k2", answerID("A2")); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Clear(context.Background()); err != nil || n != 1 {
		t.Fatalf("clear %d %v", n, err)
	}
}

// pgWithAnswer is a fresh shared cache whose runner a holds the answer A1
// for k1.
func pgWithAnswer(t *testing.T) (url string, a *PGStore) {
	t.Helper()
	url, open := pgCache(t)
	a = open(t)
	_, _, _ = a.Get(context.Background(), "k1")
	if err := a.Put(context.Background(), "k1", answerID("A1")); err != nil {
		t.Fatal(err)
	}
	return url, a
}

// TestPGDamagedIsAMiss: an answer changed in the table fails its checksum:
// a miss, counted, shown by Stats and removed by Prune.
func TestPGDamagedIsAMiss(t *testing.T) {
	url, a := pgWithAnswer(t)
	ctx := context.Background()
	conn := sqlConn(t, url)
	mustExec(t, conn, "UPDATE cache_answers SET answer = replace(answer, 'A1', 'B2')")
	if _, ok, err := a.Get(ctx, "k1"); ok || err != nil || a.Damaged() != 1 {
		t.Fatalf("damaged answer: hit %v, %v, damaged %d", ok, err, a.Damaged())
	}
	if has, err := a.ReadOnly().Has(ctx, []string{"k1"}); err != nil || has[0] || a.Damaged() != 2 {
		t.Fatalf("Has of a damaged answer: %v, %v, damaged %d", has, err, a.Damaged())
	}
	st, err := a.p.Stats(context.Background(), time.Hour)
	if err != nil || st.Damaged != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if pr, err := a.p.Prune(context.Background(), time.Hour); err != nil || pr.Unusable != 1 {
		t.Fatalf("prune %+v %v", pr, err)
	}
}

// TestPGAdminCancelled: stats, prune and clear stop at a cancelled ctx
// with its error; a clear waiting on a slow database (here, a lock another
// session holds) stops when its ctx is cancelled (Ctrl-C) and removes
// nothing.
func TestPGAdminCancelled(t *testing.T) {
	url, a := pgWithAnswer(t)
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := a.p.Stats(cancelled, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Stats: %v, want context.Canceled", err)
	}
	if _, err := a.p.Prune(cancelled, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Prune: %v, want context.Canceled", err)
	}
	if n, err := a.p.Clear(cancelled); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("Clear: %d, %v, want context.Canceled", n, err) // below, it would wait for ever
	}

	// Another session holds the answers table: the clear waits on it.
	holder := sqlConn(t, url)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	mustExecTx(t, tx, "LOCK TABLE cache_answers IN ACCESS EXCLUSIVE MODE")
	clearCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := a.p.Clear(clearCtx)
		done <- err
	}()
	// Cancel once the clear is seen waiting for the lock (or ends first).
	watch := sqlConn(t, url)
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("Clear ended while the table was locked: %v", err)
		default:
		}
		if err := watch.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = 'cache_answers'::regclass)").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Clear cancelled while it waited: %v, want context.Canceled", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := a.Get(ctx, "k1"); err != nil || !ok || r.Address.ID != "A1" {
		t.Fatalf("after the cancelled clears: %+v, %v, %v; want the answer kept", r, ok, err)
	}
}

func mustExecTx(t *testing.T, tx pgx.Tx, sql string) {
	t.Helper()
	if _, err := tx.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// TestPGOpenErrors: tables of another program under the cache's names are
// refused and left alone; a refused login never shows the password.
func TestPGOpenErrors(t *testing.T) {
	url, _ := pgCache(t)
	ctx := context.Background()
	conn := sqlConn(t, url)
	mustExec(t, conn, "CREATE TABLE cache_answers (id int, note text)")
	_, err := OpenPG(ctx, url, "shown", PGOptions{})
	if !errors.Is(err, ErrNotCache) || !strings.Contains(err.Error(), "cache shown") {
		t.Fatalf("foreign table: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'cache%' OR tablename = 'addrclean_meta'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("tables after a refusal: %d %v", n, err)
	}
	bad := strings.Replace(url, pgtest.Password, "wrong-Secret-9x", 1)
	_, err = OpenPG(ctx, bad, "postgres://app@/db", PGOptions{})
	if err == nil || strings.Contains(err.Error(), "wrong-Secret-9x") || strings.Contains(err.Error(), pgtest.Password) {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestPGSchemaFromURL: search_path in the URL puts the cache's tables in
// that schema, as docs/shared-cache.md says.
func TestPGSchemaFromURL(t *testing.T) {
	url, _ := pgCache(t)
	ctx := context.Background()
	conn := sqlConn(t, url)
	mustExec(t, conn, "CREATE SCHEMA addrclean")
	p, err := OpenPG(ctx, url+"&search_path=addrclean", "x", PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'addrclean'").Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d tables in schema addrclean, %v", n, err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tables in public, %v", n, err)
	}
}

// TestPGFailsOpen: a database that fails under a run makes the cache a miss
// (the run goes on, paying), never an error or a wait.
func TestPGFailsOpen(t *testing.T) {
	url, open := pgCache(t)
	a := open(t)
	ctx := context.Background()
	if err := a.Put(ctx, "k1", answerID("A1")); err != nil {
		t.Fatal(err)
	}
	conn := sqlConn(t, url)
	mustExec(t, conn, "DROP TABLE cache_answers")
	if _, ok, err := a.Get(ctx, "k1"); ok || err != nil {
		t.Fatalf("Get on a failed database: %v %v", ok, err)
	}
	if a.p.Failed() == nil || strings.Contains(a.p.Failed().Error(), pgtest.Password) {
		t.Fatalf("Failed: %v", a.p.Failed())
	}
	if err := a.Put(ctx, "k2", answerID("A2")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Get(ctx, "k2"); ok || err != nil {
		t.Fatalf("Get after the failure: %v %v", ok, err)
	}
}

// sqlConn is a connection of the test's own to the cache's database.
func sqlConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// age makes every answer in the database d older, with its checksum
// written again: an answer that old, not a damaged one.
func age(t *testing.T, conn *pgx.Conn, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, "SELECT namespace, key, obtained_ms, answer FROM cache_answers")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		NS, Key string
		At      int64
		Body    []byte
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[answer])
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		at := a.At - d.Milliseconds()
		if _, err := conn.Exec(ctx, "UPDATE cache_answers SET obtained_ms = $3, crc = $4 WHERE namespace = $1 AND key = $2",
			a.NS, a.Key, at, int64(checksum(a.NS, a.Key, at, a.Body))); err != nil {
			t.Fatal(err)
		}
	}
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// renew is the renewal a runner makes every third of its lease.
var renew = func(p *PG) error { return p.renewOnce(context.Background()) }
