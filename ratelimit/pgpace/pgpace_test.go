package pgpace

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens n pacers of one service on the database at url, at once, as
// runners starting together do.
func open(t *testing.T, url, service string, n int) []*Pacer {
	t.Helper()
	ps := make([]*Pacer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if ps[i], errs[i] = Open(t.Context(), url, "db", service, 4, zerolog.Nop()); errs[i] == nil {
				errs[i] = ps[i].Prepare(t.Context())
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ps[i].Close)
	}
	return ps
}

// TestReserveSpacesRunners: three runners of one service, four workers
// each, reserving at once: the slots they get, by the database's clock,
// are one interval apart, every one, whoever took the one before; another
// service has a timeline of its own.
func TestReserveSpacesRunners(t *testing.T) {
	url := pgtest.RequireDB(t)
	const interval = 10 * time.Millisecond
	ps := open(t, url, "live-one", 3)
	other := open(t, url, "live-other", 1)[0]
	var (
		mu    sync.Mutex
		slots []time.Time
		wg    sync.WaitGroup
	)
	for _, p := range ps {
		for range 4 {
			wg.Go(func() {
				for range 25 {
					slot, _, _, err := p.reserve(t.Context(), interval)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					slots = append(slots, slot)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(slots) != 300 {
		t.Fatalf("%d slots", len(slots))
	}
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	// Never closer than one interval; one interval apart unless the
	// timeline fell idle (a new connection's handshake on a busy machine).
	exact := 0
	for i := 1; i < len(slots); i++ {
		gap := slots[i].Sub(slots[i-1])
		if gap < interval {
			t.Fatalf("slot %d is %v after the one before, want %v at least", i, gap, interval)
		}
		if gap == interval {
			exact++
		}
	}
	if exact < 290 {
		t.Errorf("%d of 299 gaps are one interval, want nearly all", exact)
	}
	// 300 slots of 10 ms are 3 s of the timeline: the other service's
	// first slot is now, not after them.
	if s, err := other.Reserve(t.Context(), interval); err != nil || s.Wait > interval {
		t.Errorf("the other service's first slot is %v away (%v), want now", s.Wait, err)
	}
	// Reserve says how far the slot is: the 301st is about 3 s away
	// less the time the reservations took.
	s, err := ps[0].Reserve(t.Context(), interval)
	if err != nil || s.Wait <= 0 || s.Wait > 300*interval {
		t.Errorf("the next slot is %v away (%v), want within the 3 s reserved", s.Wait, err)
	}
}

// TestPause: a 429 pushes the next slot of every runner to Retry-After
// from now and is counted; a pause shorter than what is reserved changes
// nothing but the count; a pause of a service with no slot yet starts its
// timeline.
func TestPause(t *testing.T) {
	url := pgtest.RequireDB(t)
	ps := open(t, url, "live-one", 2)
	_, before, pauses, err := ps[0].reserve(t.Context(), time.Millisecond)
	if err != nil || pauses != 0 {
		t.Fatalf("first reservation: %d pauses, %v", pauses, err)
	}
	if n, err := ps[0].Pause(t.Context(), 2*time.Second); err != nil || n != 1 {
		t.Fatalf("Pause = %d, %v; want 1", n, err)
	}
	slot, _, pauses, err := ps[1].reserve(t.Context(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if slot.Before(before.Add(2*time.Second)) || pauses != 1 {
		t.Errorf("the other runner's slot is %v after the 429, %d pauses; want 2s at least, 1", slot.Sub(before), pauses)
	}
	if n, err := ps[1].Pause(t.Context(), time.Millisecond); err != nil || n != 2 {
		t.Fatalf("Pause = %d, %v; want 2", n, err)
	}
	next, _, _, err := ps[0].reserve(t.Context(), time.Millisecond)
	if err != nil || next.Sub(slot) != time.Millisecond {
		t.Errorf("after a shorter pause the next slot is %v after the last (%v), want 1ms", next.Sub(slot), err)
	}
	fresh := open(t, url, "live-fresh", 1)[0]
	if n, err := fresh.Pause(t.Context(), time.Second); err != nil || n != 1 {
		t.Fatalf("Pause of a new service = %d, %v; want 1", n, err)
	}
	if s, err := fresh.Reserve(t.Context(), time.Millisecond); err != nil || s.Wait < 500*time.Millisecond || s.Pauses != 1 {
		t.Errorf("after the pause of a new service: %+v, %v; want about 1s away, 1 pause", s, err)
	}
}

// TestOpenRefuses: a table of another program under the name is refused,
// and a URL that cannot be read is an error without its password.
func TestOpenRefuses(t *testing.T) {
	url := pgtest.RequireDB(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "CREATE TABLE "+Table+" (service text, slots int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	if _, err := Open(t.Context(), url, "db", "live-one", 1, zerolog.Nop()); !errors.Is(err, ErrNotPace) {
		t.Errorf("a table of another program: %v, want ErrNotPace", err)
	}
	_, err = Open(t.Context(), "postgres://etl:s3cret@db.example.com:notaport/crm", "postgres://etl@db.example.com/crm", "x", 1, zerolog.Nop())
	if !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a bad URL: %v, want ErrBadURL without the password", err)
	}
}

// TestOpenCreatesNothing: Open only connects and checks, so that a run
// refused after it leaves no table behind; Prepare creates the table, and
// reservations then work.
func TestOpenCreatesNothing(t *testing.T) {
	url := pgtest.RequireDB(t)
	p, err := Open(t.Context(), url, "db", "live-one", 1, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	exists := func() bool {
		var ok bool
		if err := p.pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", Table).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if exists() {
		t.Fatalf("Open created %s", Table)
	}
	if err := p.Prepare(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !exists() {
		t.Fatalf("Prepare did not create %s", Table)
	}
	if _, err := p.Reserve(t.Context(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
