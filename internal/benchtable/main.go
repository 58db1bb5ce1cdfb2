// Command benchtable runs the built addrclean binary over generated inputs and
// prints the table of `make bench`: rows/s, CPU per row, peak memory and rate
// utilisation. It measures the real process (wall clock and rusage of the
// child), so the figures include start-up, reading, the embedded service's
// HTTP round trips and writing.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
	"github.com/addrclean/addrclean/service"
)

func main() {
	bin := flag.String("bin", "bin/addrclean", "addrclean binary to measure")
	sizes := flag.String("rows", "100000,1000000", "comma-separated input sizes (rows)")
	flag.BoolVar(&withJournal, "journal", true, "also measure the first size with --journal on")
	flag.StringVar(&keepDir, "dir", "", "keep the generated inputs and outputs in this directory (default: a temporary one, removed)")
	refSize := flag.Int("reference", 100000, "addresses in the generated reference")
	rateRows := flag.Int("rate-rows", 1500, "rows of the rate-utilisation run")
	rate := flag.Float64("rate", 100, "--rate of the rate-utilisation run")
	latency := flag.Duration("latency", 50*time.Millisecond, "service latency of the rate-utilisation run")
	flag.Parse()
	if err := run(context.Background(), *bin, *sizes, *refSize, *rateRows, *rate, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

var (
	keepDir     string
	withJournal bool
)

type measurement struct {
	name              string
	rows              int
	wall, cpu         time.Duration
	maxRSS            int64 // bytes
	utilisation, peak float64
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
	refs, err := makeReference(refPath, refSize)
	if err != nil {
		return err
	}
	var ms []measurement
	for _, s := range strings.Split(sizes, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n <= 0 {
			return fmt.Errorf("bad -rows entry %q", s)
		}
		in := filepath.Join(dir, fmt.Sprintf("in%d.csv", n))
		if err := writeInput(in, refs, n); err != nil {
			return err
		}
		args := []string{"run", "--no-progress", "--log-format", "json", "--log-level", "warn",
			"--reference", refPath, "-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in}
		m, err := measure(ctx, bin, fmt.Sprintf("embedded, %d rows", n), n, dir, nil, args...)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		if withJournal && len(ms) == 1 {
			// The journal a live run keeps, on the first size only: what
			// resumability costs per row.
			m, err := measure(ctx, bin, fmt.Sprintf("embedded, %d rows, --journal on", n), n, dir, nil, append(args[:1:1], append([]string{"--journal", "on"}, args[1:]...)...)...)
			if err != nil {
				return err
			}
			ms = append(ms, m)
		}
	}
	m, err := measureRate(ctx, bin, dir, refPath, refs, rateRows, rate, latency)
	if err != nil {
		return err
	}
	ms = append(ms, m)
	printTable(os.Stdout, ms)
	return nil
}

// measure runs the binary and reads its wall time and rusage.
func measure(ctx context.Context, bin, name string, rows int, dir string, env []string, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w\n%s", name, err, tail(stderr.String(), 2000))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return measurement{}, fmt.Errorf("%s: no rusage on this platform", name)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return measurement{name: name, rows: rows, wall: wall, cpu: cpu, maxRSS: ru.Maxrss * 1024}, nil
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
	var mu sync.Mutex
	var arrivals []time.Time
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/verify") {
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
			select {
			case <-time.After(latency):
			case <-r.Context().Done():
			}
		}
		svc.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return measurement{}, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()

	in := filepath.Join(dir, "rate.csv")
	if err := writeInput(in, refs, rows); err != nil {
		return measurement{}, err
	}
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(integ.Key+"\n"), 0o600); err != nil {
		return measurement{}, err
	}
	workers := int(rate*latency.Seconds()*2) + 4
	name := fmt.Sprintf("live, --rate %g, %v latency, %d workers", rate, latency, workers)
	m, err := measure(ctx, bin, name, rows, dir, nil, "run", "--no-progress", "--log-format", "json", "--log-level", "warn",
		"--base-url", "http://"+ln.Addr().String(), "--api-key-file", keyFile,
		"--rate", fmt.Sprint(rate), "--workers", fmt.Sprint(workers),
		"-o", filepath.Join(dir, "rate.out.csv"), "--review", filepath.Join(dir, "rate.review.csv"), in)
	if err != nil {
		return measurement{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) > 1 {
		span := arrivals[len(arrivals)-1].Sub(arrivals[0]).Seconds()
		// n arrivals paced at the rate span (n-1)/rate seconds.
		m.utilisation = float64(len(arrivals)-1) / span / rate
		j := 0
		for i := range arrivals {
			for arrivals[i].Sub(arrivals[j]) >= time.Second {
				j++
			}
			m.peak = max(m.peak, float64(i-j+1))
		}
	}
	return m, nil
}

func printTable(w io.Writer, ms []measurement) {
	fmt.Fprintln(w, "| run | rows | wall | rows/s | CPU per row | peak RSS | rate utilisation | max calls in 1 s |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		util, peak := "—", "—"
		if m.utilisation > 0 {
			util = fmt.Sprintf("%.1f%%", 100*m.utilisation)
			peak = fmt.Sprintf("%.0f", m.peak)
		}
		fmt.Fprintf(w, "| %s | %d | %.2fs | %.0f | %.1f µs | %.0f MB | %s | %s |\n",
			m.name, m.rows, m.wall.Seconds(), float64(m.rows)/m.wall.Seconds(),
			float64(m.cpu.Microseconds())/float64(m.rows), float64(m.maxRSS)/1e6, util, peak)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// makeReference writes a generated reference of n addresses and returns
// its records.
func makeReference(path string, n int) ([]gazetteer.Record, error) {
	recs := make([]gazetteer.Record, 0, n)
	synth.Generate(synth.SampleSeed, n, func(r gazetteer.Record) bool {
		recs = append(recs, r)
		return true
	})
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	err = gazetteer.WriteCSV(f, func(yield func(gazetteer.Record) bool) {
		for _, r := range recs {
			if !yield(r) {
				return
			}
		}
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return recs, err
}

// writeInput writes a CRM-style export of n rows from refs. Row i takes
// reference i mod len(refs) in written form i / len(refs) (abbreviated
// street, no postcode, "Co." before the county, no county ...), so rows stay
// distinct addresses and the run's deduplication saves no calls: every row
// costs a verify call, as in a table of distinct customers.
func writeInput(path string, refs []gazetteer.Record, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"Customer ID", "Name", "Address 1", "Address 2", "Town", "County", "Postcode", "Country"})
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"Aoife Byrne", "Sean Murphy", "Jane Smith", "Tom Evans", "Niamh Kelly", "Alan Jones"}
	for i := range n {
		r := refs[i%len(refs)]
		v := i / len(refs)
		line1 := strings.TrimSpace(strings.Join(nonEmpty(r.SubBuilding, r.BuildingName), ", "))
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
		if err := w.Write([]string{fmt.Sprintf("C%07d", i+1), names[rng.IntN(len(names))], line1, street, r.City, county, postcode, country}); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
