package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/childrun"
	"github.com/addrclean/addrclean/sample_data/synth"
	"github.com/addrclean/addrclean/service"
)

func main() {
	bin := flag.String("bin", "bin/addrclean", "addrclean binary to measure")
	sizes := flag.String("rows", "100000,1000000", "comma-separated input sizes (rows) of the embedded runs; empty for none")
	flag.BoolVar(&withJournal, "journal", true, "also measure the first size with --journal on")
	flag.BoolVar(&withCache, "cache", false, "also measure the first size with --cache, into a new cache and again from it")
	flag.StringVar(&cacheURL, "cache-url", "", "with -cache: a postgres:// DBURL whose database holds no cache yet (shared cache), instead of a new file")
	flag.StringVar(&keepDir, "dir", "", "keep the generated inputs and outputs in this directory (default: a temporary one, removed)")
	refSize := flag.Int("reference", 100000, "addresses in the generated reference")
	rateRows := flag.Int("rate-rows", 1500, "rows of the rate-utilisation run (0: none)")
	rate := flag.Float64("rate", 100, "--rate of the rate-utilisation run")
	latency := flag.Duration("latency", 50*time.Millisecond, "service latency of the rate-utilisation run")
	flag.IntVar(&quota.rows, "quota-rows", 3000, "rows of the quota run (0: no quota run)")
	flag.Float64Var(&quota.rps, "quota", 50, "requests per second the key of the quota run may make")
	flag.IntVar(&quota.burst, "quota-burst", 10, "burst of that key")
	flag.Parse()
	quota.rate = *rate
	if err := run(context.Background(), *bin, *sizes, *refSize, *rateRows, *rate, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

var (
	keepDir     string
	withJournal bool
	withCache   bool
	cacheURL    string
	quota       quotaRun
)

// Far-apart duplicates of the generated inputs: dupShare of the rows repeat
// an address seen more than dupGap rows earlier, beyond the reach of a
// deduplication that only remembers recent rows.
const (
	dupShare = 0.15
	dupGap   = 2000
)

type measurement struct {
	name              string
	rows              int
	wall, cpu         time.Duration
	maxRSS            int64 // bytes
	utilisation, peak float64
	// distinct is the number of distinct addresses of the input; answered
	// the verify calls the service answered; limited its 429s (-1 unknown).
	distinct, answered, limited int64
	// own marks the row of the pipeline's own cost (CPU only).
	own bool
}

// summary is the part of the run's --summary that the table reads.
type summary struct {
	CallsMade   int64            `json:"calls_made"`
	RateLimited int64            `json:"rate_limited"`
	Retries     int64            `json:"retries"`
	Errors      map[string]int64 `json:"errors"`
}

// readSummary reads a --summary file.
func readSummary(path string) (summary, error) {
	var s summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func run(ctx context.Context, bin, sizes string, refSize, rateRows int, rate float64, latency time.Duration) error {
	dir := keepDir
	if dir == "" {
		d, err := os.MkdirTemp("", "addrclean-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	refPath := filepath.Join(dir, "reference.csv")
	refs, err := synth.WriteReference(refPath, synth.SampleSeed, refSize)
	if err != nil {
		return err
	}
	var ns []int
	for _, s := range strings.FieldsFunc(sizes, func(r rune) bool { return r == ',' }) {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n <= 0 {
			return fmt.Errorf("bad -rows entry %q", s)
		}
		ns = append(ns, n)
	}
	var ms []measurement
	for i, n := range ns {
		in := filepath.Join(dir, fmt.Sprintf("in%d.csv", n))
		distinct, err := writeInput(in, refs, n)
		if err != nil {
			return err
		}
		sum := filepath.Join(dir, "summary.json")
		args := []string{"run", "--no-progress", "--log-format", "json", "--log-level", "warn", "--summary", sum,
			"--reference", refPath, "-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in}
		embedded := func(name string, args []string) error {
			m, err := measure(ctx, bin, name, n, args...)
			if err != nil {
				return err
			}
			// The embedded service is inside the process: its answers are
			// the calls made less those that failed.
			st, err := readSummary(sum)
			if err != nil {
				return err
			}
			m.distinct, m.limited = distinct, st.RateLimited
			m.answered = st.CallsMade - st.RateLimited - st.Retries - st.Errors["transient"]
			ms = append(ms, m)
			return nil
		}
		if err := embedded(fmt.Sprintf("embedded, %d rows", n), args); err != nil {
			return err
		}
		// The gazetteer's share of that run, and the rest: what the
		// pipeline itself costs per row.
		full := ms[len(ms)-1]
		alone, err := matcherAlone(ctx, refPath, in, n)
		if err != nil {
			return err
		}
		ms = append(ms, alone, measurement{name: fmt.Sprintf("pipeline's own cost, %d rows (embedded − matcher alone)", n),
			rows: n, cpu: full.cpu - alone.cpu, own: true, limited: -1})
		if withCache && i == 0 {
			// What the cache costs a run that fills it, and what a re-run
			// that finds every answer in it costs.
			db := filepath.Join(dir, "cache.db")
			_ = os.Remove(db)
			spec := db
			if cacheURL != "" {
				spec = cacheURL // the tables are created by the first pass
			}
			withDB := append(args[:1:1], append([]string{"--cache", spec}, args[1:]...)...)
			for _, pass := range []string{"new cache", "warm cache"} {
				if err := embedded(fmt.Sprintf("embedded, %d rows, --cache (%s)", n, pass), withDB); err != nil {
					return err
				}
			}
			_ = os.Remove(db)
		}
		if withJournal && i == 0 {
			// The journal a live run keeps, on the first size only: what
			// resumability costs per row.
			if err := embedded(fmt.Sprintf("embedded, %d rows, --journal on", n),
				append(args[:1:1], append([]string{"--journal", "on"}, args[1:]...)...)); err != nil {
				return err
			}
		}
	}
	if rateRows > 0 {
		m, err := measureRate(ctx, bin, dir, refPath, refs, rateRows, rate, latency)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if quota.rows > 0 {
		m, err := quota.measure(ctx, bin, dir, refPath, refs)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	printTable(os.Stdout, ms)
	return nil
}

// measure runs the binary and measures it (internal/childrun: the peak RSS
// is the child's own, not this driver's).
func measure(ctx context.Context, bin, name string, rows int, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	r, err := childrun.Run(ctx, cmd)
	if err != nil {
		msg := stderr.String()
		return measurement{}, fmt.Errorf("%s: %w\n%s", name, err, msg[max(0, len(msg)-2000):])
	}
	return measurement{name: name, rows: rows, wall: r.Wall, cpu: r.CPU, maxRSS: r.PeakRSS}, nil
}

// measureRate runs against a local service that answers after a fixed latency
// and records the second-by-second arrival of verify calls: the achieved rate
// against --rate and the busiest one-second window.
func measureRate(ctx context.Context, bin, dir, refPath string, refs []gazetteer.Record, rows int, rate float64, latency time.Duration) (measurement, error) {
	ix, err := gazetteer.LoadFile(ctx, refPath)
	if err != nil {
		return measurement{}, err
	}
	integ, err := service.NewDevIntegration()
	if err != nil {
		return measurement{}, err
	}
	svc, err := service.New(ix, []service.Integration{integ})
	if err != nil {
		return measurement{}, err
	}
	var (
		mu                sync.Mutex
		arrivals          []time.Time
		answered, limited int64
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/verify") {
			svc.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
		}
		sw := &statusWriter{ResponseWriter: w}
		svc.ServeHTTP(sw, r)
		mu.Lock()
		switch sw.status {
		case http.StatusOK:
			answered++
		case http.StatusTooManyRequests:
			limited++
		}
		mu.Unlock()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return measurement{}, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()

	in := filepath.Join(dir, "rate.csv")
	distinct, err := writeInput(in, refs, rows)
	if err != nil {
		return measurement{}, err
	}
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(integ.Key+"\n"), 0o600); err != nil {
		return measurement{}, err
	}
	workers := int(rate*latency.Seconds()*2) + 4
	name := fmt.Sprintf("live, --rate %g, %v latency, %d workers", rate, latency, workers)
	m, err := measure(ctx, bin, name, rows, "run", "--no-progress", "--log-format", "json", "--log-level", "warn",
		"--base-url", "http://"+ln.Addr().String(), "--api-key-file", keyFile,
		"--rate", fmt.Sprint(rate), "--workers", fmt.Sprint(workers),
		"-o", filepath.Join(dir, "rate.out.csv"), "--review", filepath.Join(dir, "rate.review.csv"), in)
	if err != nil {
		return measurement{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	m.distinct, m.answered, m.limited = distinct, answered, limited
	m.utilisation, m.peak = utilisation(arrivals, rate), busiestSecond(arrivals)
	return m, nil
}

// utilisation is the rate of the events from first to last as a share of
// rate: n events paced at the rate span (n-1)/rate seconds.
func utilisation(events []time.Time, rate float64) float64 {
	n := len(events)
	if n < 2 {
		return 0
	}
	return float64(n-1) / events[n-1].Sub(events[0]).Seconds() / rate
}

// busiestSecond is the most events, in time order, within one second.
func busiestSecond(events []time.Time) float64 {
	most, j := 0, 0
	for i := range events {
		for events[i].Sub(events[j]) >= time.Second {
			j++
		}
		most = max(most, i-j+1)
	}
	return float64(most)
}

func printTable(w io.Writer, ms []measurement) {
	fmt.Fprintln(w, "| run | rows | wall | rows/s | CPU per row | peak RSS | calls / distinct | rate utilisation | 429s | max calls in 1 s |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		cpu := fmt.Sprintf("%.1f µs", float64(m.cpu.Microseconds())/float64(m.rows))
		if m.own {
			fmt.Fprintf(w, "| %s | %d | — | — | %s | — | — | — | — | — |\n", m.name, m.rows, cpu)
			continue
		}
		util, peak, limited, perDistinct, rss := "—", "—", "—", "—", "—"
		if m.maxRSS >= 0 {
			rss = fmt.Sprintf("%.0f MB", float64(m.maxRSS)/1e6)
		}
		if m.utilisation > 0 {
			util = fmt.Sprintf("%.1f%%", 100*m.utilisation)
			peak = fmt.Sprintf("%.0f", m.peak)
		}
		if m.distinct > 0 {
			perDistinct = fmt.Sprintf("%.2f", float64(m.answered)/float64(m.distinct))
		}
		if calls := m.answered + m.limited; m.limited >= 0 && calls > 0 {
			limited = fmt.Sprintf("%.1f%%", 100*float64(m.limited)/float64(calls))
		}
		fmt.Fprintf(w, "| %s | %d | %.2fs | %.0f | %s | %s | %s | %s | %s | %s |\n",
			m.name, m.rows, m.wall.Seconds(), float64(m.rows)/m.wall.Seconds(), cpu, rss, perDistinct, util, limited, peak)
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// writeInput writes a CRM-style export of n rows from refs and returns the
// number of distinct addresses in it, as deduplication sees them (case and
// white space folded). Original rows are distinct: the k-th takes reference
// k mod len(refs) in written form k / len(refs) (abbreviated street, no
// postcode, "Co." before the county, no county ...), as in a table of
// distinct customers. dupShare of the rows, once there are more than dupGap
// before them, repeat the address of an original row more than dupGap rows
// back, upper-cased or with doubled spaces: the same customer entered again
// long after.
func writeInput(path string, refs []gazetteer.Record, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"Customer ID", "Name", "Address 1", "Address 2", "Town", "County", "Postcode", "Country"})
	rng := rand.New(rand.NewPCG(1, 2))
	dups := rand.New(rand.NewPCG(3, 4)) // its own source: the originals stay as they were
	names := []string{"Aoife Byrne", "Sean Murphy", "Jane Smith", "Tom Evans", "Niamh Kelly", "Alan Jones"}
	// originals[i % len] is how many original rows came before row i, for
	// the last dupGap+1 rows: a duplicate at row i picks among those before
	// row i-dupGap.
	var originals [dupGap + 1]int
	k := 0
	seen := make(map[uint64]struct{})
	for i := range n {
		originals[i%len(originals)] = k
		var addr []string
		if i > dupGap && dups.Float64() < dupShare {
			if before := originals[(i-dupGap)%len(originals)]; before > 0 {
				addr = refAddress(refs, dups.IntN(before))
				refold(addr, dups.IntN(2))
			}
		}
		if addr == nil {
			addr = refAddress(refs, k)
			k++
		}
		seen[foldKey(addr)] = struct{}{}
		rec := append([]string{fmt.Sprintf("C%07d", i+1), names[rng.IntN(len(names))]}, addr...)
		if err := w.Write(rec); err != nil {
			return 0, err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return 0, err
	}
	return int64(len(seen)), f.Close()
}

// refAddress returns the address columns of the k-th original row: Address
// 1, Address 2, Town, County, Postcode, Country.
func refAddress(refs []gazetteer.Record, k int) []string {
	r := refs[k%len(refs)]
	v := k / len(refs)
	names := slices.DeleteFunc([]string{r.SubBuilding, r.BuildingName}, func(s string) bool { return s == "" })
	line1 := strings.TrimSpace(strings.Join(names, ", "))
	street := strings.TrimSpace(r.BuildingNumber + " " + r.Street)
	if v&1 == 1 {
		street = strings.Replace(street, " Street", " St", 1)
		street = strings.Replace(street, " Road", " Rd", 1)
	}
	if line1 == "" {
		line1, street = street, r.Locality
	} else {
		line1 = line1 + ", " + street
		street = r.Locality
	}
	county, postcode := r.Region, r.Postcode
	if v&2 == 2 {
		postcode = ""
	}
	if v&4 == 4 && r.Country == "IE" {
		county = "Co. " + county
	}
	if v&8 == 8 {
		county = ""
	}
	country := map[string]string{"IE": "Ireland", "GB": "United Kingdom"}[r.Country]
	return []string{line1, street, r.City, county, postcode, country}
}

// refold writes addr again as a person re-entering it might: upper case
// (how 0), or doubled spaces and a trailing one (how 1).
func refold(addr []string, how int) {
	for i, s := range addr {
		if how == 0 {
			addr[i] = strings.ToUpper(s)
		} else if s != "" {
			addr[i] = strings.ReplaceAll(s, " ", "  ") + " "
		}
	}
}

// foldKey is the identity deduplication gives the address columns of a row:
// the non-empty lines (Address 1, Address 2, then the postcode), town,
// county and country, each lower-cased with white space folded; hashed, so
// that a million rows cost a few megabytes.
func foldKey(addr []string) uint64 {
	fold := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	h := fnv.New64a()
	for _, l := range []string{addr[0], addr[1], addr[4]} {
		if l = fold(l); l != "" {
			h.Write([]byte(l))
			h.Write([]byte{0})
		}
	}
	for _, f := range []string{addr[2], addr[3], addr[5]} {
		h.Write([]byte{1})
		h.Write([]byte(fold(f)))
	}
	return h.Sum64()
}
