package main

import (
	"flag"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/estimate"
	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runs/endpoint"
)

// runOptions are the flags of 'addrclean run'.
type runOptions struct {
	input, out, review, sheet       string
	headerRow                       int
	prefix                          string
	lineCols                        string
	lineCol                         cliflag.List
	cityCol, regionCol, postcodeCol string
	countryCol, idCol               string
	country, language               string
	baseURL, apiKeyFile, apiKeyFlag string
	workers                         int
	rate                            float64
	burst                           int
	timeout, maxWait, tokenTTL      time.Duration
	retries                         int
	reference                       string
	delimiter, encoding             string
	rawCells                        bool
	bom                             bool
	outEncoding                     string
	resume, restart, keepJournal    bool
	journal                         string
	journalDir                      string // --journal-dir
	maxErrors                       string
	cache                           string
	cacheTTL                        time.Duration
	cacheLease                      time.Duration
	rateShared                      bool // --rate-shared
	markCached                      bool
	limit                           int
	dryRun                          bool
	shardSpec                       string         // --shard as written
	shard                           pipeline.Shard // parsed --shard (shard.go)
	summary                         string
	report                          string
	logFormat, logLevel             string
	noProgress                      bool
	method                          string
	rateSet, cacheTTLSet            bool
	cacheLeaseSet                   bool
	errorLimit                      errorLimit     // parsed --max-errors
	policy                          runs.Policy    // what the journal flags ask
	tables                          tableOptions   // table.go
	plan                            *endpoint.Plan // the input and outputs, checked (setupTables)
	finished                        time.Time      // when the run ended, for its summary (report.go)

	// --price-per-call (estimate.go): as given, whether given, and parsed
	// by validate (nil without a price).
	pricePerCall string
	priceSet     bool
	price        *estimate.Price
}

func newRunFlags(o *runOptions, stderr io.Writer) *flag.FlagSet {
	fs := cliflag.New("run", runUsage, stderr)
	fs.StringVar(&o.out, "out", "", "enriched output `PATH`; format from the extension (.csv .tsv .xlsx .jsonl); - = CSV on stdout\n(default <input-stem>.cleaned.<ext> beside the input)")
	fs.StringVar(&o.out, "o", "", "shorthand for --out")
	fs.StringVar(&o.review, "review", "", "review output `PATH` (default <input-stem>.review.<ext> beside the input)")
	fs.StringVar(&o.sheet, "sheet", "", "XLSX sheet `NAME` (default: the first)")
	fs.IntVar(&o.headerRow, "header-row", 0, "row `N` (1-based) holding the header; rows above it are skipped\n(default: the first row with text; in a workbook, title rows above the header are passed over)")
	fs.StringVar(&o.prefix, "prefix", "", "with columns for several addresses (Billing Street, Shipping Street...), use those starting with `PREFIX`\n(default: Billing, Mailing... before Shipping)")
	fs.StringVar(&o.lineCols, "line-cols", "", "comma-separated `COLUMNS` sent as addressLine, in order")
	fs.Var(&o.lineCol, "line-col", "one `COLUMN` sent as addressLine (repeatable, for names containing a comma)")
	fs.StringVar(&o.cityCol, "city-col", "", "city `COLUMN`")
	fs.StringVar(&o.regionCol, "region-col", "", "region/county `COLUMN`")
	fs.StringVar(&o.postcodeCol, "postcode-col", "", "postcode/Eircode `COLUMN` (sent as the last addressLine)")
	fs.StringVar(&o.countryCol, "country-col", "", "country `COLUMN`")
	fs.StringVar(&o.idCol, "id-col", "", "record id `COLUMN` (used in messages)")
	fs.StringVar(&o.country, "country", "", "country `CODE` for rows that have none")
	fs.StringVar(&o.language, "language", "", "language `CODE` to search in (default: all)")
	fs.StringVar(&o.baseURL, "base-url", os.Getenv("ADDRCLEAN_BASE_URL"), "live service `URL` (env ADDRCLEAN_BASE_URL); empty = embedded local service")
	fs.StringVar(&o.apiKeyFile, "api-key-file", "", "file holding the API key (or env ADDRCLEAN_API_KEY); never logged")
	fs.StringVar(&o.apiKeyFlag, "api-key", "", "refused: a key on the command line shows in the process list; use --api-key-file or ADDRCLEAN_API_KEY")
	fs.IntVar(&o.workers, "workers", 8, "concurrent requests")
	fs.Float64Var(&o.rate, "rate", 20, "requests per second against a live service (0 = unlimited); the embedded service is unlimited unless --rate is given")
	fs.BoolVar(&o.rateShared, "rate-shared", false, "--rate is the rate of every runner of this service and key together, paced through the database\nof --cache postgres://... (shards against one quota; see docs/scaling-out.md)")
	fs.IntVar(&o.burst, "burst", 1, "requests allowed at once above the rate")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of one request")
	fs.IntVar(&o.retries, "retries", 3, "retries of a request that failed transiently (429 answers do not count)")
	fs.DurationVar(&o.maxWait, "max-wait", 10*time.Minute, "total time one row may wait out 429 answers before it is Error")
	fs.DurationVar(&o.tokenTTL, "token-ttl", 0, "known token lifetime: refresh ahead of it (0 = refresh on 401 only)")
	fs.StringVar(&o.reference, "reference", "", "reference address `CSV` for the embedded service (default: bundled sample)")
	fs.StringVar(&o.delimiter, "delimiter", "", "CSV delimiter (default: detected among , ; tab |)")
	fs.StringVar(&o.encoding, "encoding", "utf-8", "input text encoding: utf-8 or windows-1252")
	fs.BoolVar(&o.bom, "bom", false, "start CSV outputs with a UTF-8 byte-order mark, so that Excel reads them as UTF-8 (what Excel on Windows wants)")
	fs.StringVar(&o.outEncoding, "out-encoding", "utf-8", "CSV output encoding: utf-8 or windows-1252 (characters it lacks become '?')")
	fs.BoolVar(&o.rawCells, "raw-cells", false, "do not neutralise spreadsheet formulas in CSV/XLSX outputs")
	fs.BoolVar(&o.resume, "resume", false, "continue an interrupted run from its journal (<out>.journal): finished rows are not sent again;\nwithout a journal, start afresh (saying so), so cron jobs can always pass it")
	fs.BoolVar(&o.restart, "restart", false, "discard the journal of an interrupted run, if any, and start from the first row\n(for a nightly export that is regenerated: pair it with --cache)")
	fs.StringVar(&o.journal, "journal", "auto", "keep a journal for --resume: on, off, or auto = on against a live service (every call is paid for),\noff against the embedded one unless --resume or --restart is given or a journal is there")
	fs.StringVar(&o.journalDir, "journal-dir", os.Getenv("ADDRCLEAN_JOURNAL_DIR"), "`DIR` of the journal of a run whose outputs are all tables (or -o - alone; a file output\nkeeps its journal beside it). Env ADDRCLEAN_JOURNAL_DIR; default: addrclean/journals in the\nuser's cache directory ($XDG_CACHE_HOME, else ~/.cache)")
	fs.BoolVar(&o.keepJournal, "keep-journal", false, "keep the journal after a run that finished (default: removed); a later --resume replays it")
	fs.StringVar(&o.maxErrors, "max-errors", "", "stop with exit 1 once more than `N` rows, or N% of the rows written, are Error (default: no limit; exit 3)")
	fs.StringVar(&o.cache, "cache", "", "result cache `PATH` (an SQLite file, created if missing; a damaged one is moved aside), or a postgres:// DBURL\nshared by concurrent runners, which then pay once per request between them: answers are reused across runs\nfor the same service and key (or embedded reference); see 'addrclean cache --help' and docs/shared-cache.md")
	fs.DurationVar(&o.cacheTTL, "cache-ttl", 30*24*time.Hour, "reuse cached answers up to this age; older ones are verified again")
	fs.DurationVar(&o.cacheLease, "cache-lease", cache.DefaultLease, "with a postgres:// --cache: how long a killed runner's claim on a request holds\nbefore another runner takes it over (a live runner renews its claims)")
	fs.BoolVar(&o.markCached, "mark-cached", false, "add a last column av_cached (true when the answer came from --cache) to the enriched output")
	fs.IntVar(&o.limit, "limit", 0, "only the first N data rows (0 = all)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "read, map and check the input, and estimate the run: rows, distinct requests, answers of --cache\nand of a --resume journal, calls to pay, time at --rate and cost; no service calls")
	fs.StringVar(&o.pricePerCall, "price-per-call", "", "the service's `PRICE` of one call, as 0.004, 0.004 EUR or €0.004 (env ADDRCLEAN_PRICE_PER_CALL):\n--dry-run shows the cost of the calls to pay in that currency, a run what its calls cost")
	fs.StringVar(&o.shardSpec, "shard", "", "verify only part `I/N` of the input (I from 0 to N-1), split by the hash of the folded address,\nso that N runners upsert into the same --out-table/--review-table and pay once per address\n(table outputs only; see docs/scaling-out.md)")
	fs.StringVar(&o.summary, "summary", "", "also write the run's summary as JSON to `PATH`")
	fs.StringVar(&o.report, "report", "", "also write the after-run report, one self-contained HTML page, to `PATH`.html\n(built from the enriched output and the run's statistics; see 'addrclean report')")
	fs.StringVar(&o.logFormat, "log-format", "auto", "auto, console or json (json: one object per stderr line)")
	fs.StringVar(&o.logLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress bar")
	fs.StringVar(&o.method, "method", "POST", "verify request method: POST (token in the body) or GET")
	addTableFlags(fs, &o.tables)
	return fs
}

// errorLimit is --max-errors: at most rows Error rows, or at most share of
// the rows written.
type errorLimit struct {
	set   bool
	rows  int64
	share float64
}

// parseMaxErrors reads --max-errors: N rows (0: stop at the first), or P%
// of the rows written.
func parseMaxErrors(s string) (errorLimit, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return errorLimit{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v <= 0 || v > 100 {
			return errorLimit{}, usageErrorf("--max-errors %q: want a share such as 5%% (more than 0, at most 100)", s)
		}
		return errorLimit{share: v / 100}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errorLimit{}, usageErrorf("--max-errors %q: want a number of rows such as 100, or a share such as 5%%", s)
	}
	return errorLimit{set: true, rows: n}, nil
}
