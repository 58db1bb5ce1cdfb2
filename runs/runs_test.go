package runs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
)

func TestPolicyCheck(t *testing.T) {
	tests := []struct {
		p    Policy
		want string // "" = accepted
	}{
		{Policy{Mode: "auto", Resume: true}, ""},
		{Policy{Mode: "on", Restart: true, Keep: true}, ""},
		{Policy{Mode: "off"}, ""},
		{Policy{Mode: "auto", Resume: true, Restart: true}, "--resume and --restart contradict each other"},
		{Policy{Mode: "off", Resume: true}, "--resume is about the journal, and --journal off keeps none"},
		{Policy{Mode: "off", Restart: true}, "--restart is about the journal"},
		{Policy{Mode: "off", Keep: true}, "--keep-journal is about the journal"},
		{Policy{Mode: "maybe"}, `--journal "maybe": want auto, on or off`},
	}
	for _, tt := range tests {
		err := tt.p.Check()
		var ue *UsageError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.p, err)
		case tt.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: %v, want a UsageError saying %q", tt.p, err, tt.want)
		}
	}
}

func TestPolicyKeeps(t *testing.T) {
	dir := t.TempDir()
	there := filepath.Join(dir, "there.journal")
	if err := os.WriteFile(there, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none.journal")
	tests := []struct {
		name string
		p    Policy
		path string
		want bool
		why  string
	}{
		{"live service, auto", Policy{Mode: "auto", Live: true}, none, true, ""},
		{"embedded, auto", Policy{Mode: "auto"}, none, false, "--journal auto keeps none for the embedded service"},
		{"embedded, a journal there", Policy{Mode: "auto"}, there, true, ""},
		{"embedded, --resume", Policy{Mode: "auto", Resume: true}, none, true, ""},
		{"embedded, --restart", Policy{Mode: "auto", Restart: true}, none, true, ""},
		{"embedded, --keep-journal", Policy{Mode: "auto", Keep: true}, none, true, ""},
		{"embedded, on", Policy{Mode: "on"}, none, true, ""},
		{"live, off", Policy{Mode: "off", Live: true}, there, false, "--journal off"},
		{"stdin", Policy{Mode: "on", Stdin: true, Live: true}, none, false, "stdin cannot be read twice"},
	}
	for _, tt := range tests {
		got, why := tt.p.keeps(tt.path)
		if got != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: keeps = %v, %q; want %v, %q", tt.name, got, why, tt.want, tt.why)
		}
	}
}

func TestCanonicalURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://API.Example.com/", "https://api.example.com"},
		{"HTTPS://api.example.com/v1//", "https://api.example.com/v1"},
		{"https://user:secret@api.example.com", "https://api.example.com"},
		{"https://api.example.com/Path", "https://api.example.com/Path"},
		{"://bad", "://bad"},
	}
	for _, tt := range tests {
		if got := CanonicalURL(tt.in); got != tt.want {
			t.Errorf("CanonicalURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// described is a source that tells its format, as the readers do.
type described struct {
	readers.Reader
	info readers.Info
}

func (d described) Info() readers.Info { return d.info }

// What makes two runs the same: every change below but the spelling of the
// service's URL must make a resume refuse the journal.
func TestIdentityMeta(t *testing.T) {
	base := func() Identity {
		return Identity{
			Input:    journal.Input{Path: "/in.csv", Size: 10, SHA256: "ab"},
			Columns:  map[string]string{"line1": "Address", "city": "Town", "default_country": "IE"},
			Encoding: "utf-8",
			Source:   described{info: readers.Info{Format: readers.FormatCSV, Delimiter: ','}},
			BaseURL:  "https://api.example.com",
		}
	}
	tests := []struct {
		name string
		edit func(*Identity)
		want string // in the difference; "" = the same run
	}{
		{"nothing changed", func(*Identity) {}, ""},
		{"the URL spelled otherwise", func(id *Identity) { id.BaseURL = "https://API.example.com/" }, ""},
		{"another service", func(id *Identity) { id.BaseURL = "https://other.example.com" }, "service was"},
		{"the embedded service", func(id *Identity) { id.BaseURL, id.Embedded = "", "abc" }, `"embedded, reference and build abc"`},
		{"another input", func(id *Identity) { id.Input.SHA256 = "cd" }, "the input file changed"},
		{"another country", func(id *Identity) { id.Columns["default_country"] = "GB" }, `--country was "IE", now "GB"`},
		{"another mapping", func(id *Identity) { id.Columns["city"] = "City" }, "column mapping was"},
		{"another encoding", func(id *Identity) { id.Encoding = "windows-1252" }, "--encoding was"},
		{"another delimiter", func(id *Identity) {
			id.Source = described{info: readers.Info{Format: readers.FormatCSV, Delimiter: ';'}}
		}, "--delimiter was"},
		{"a sheet", func(id *Identity) { id.Source = described{info: readers.Info{Format: readers.FormatXLSX, Sheet: "S"}} }, "--sheet was"},
		{"a source table", func(id *Identity) { id.Extra = map[string]string{"source": "t"} }, `source was not set, now "t"`},
	}
	for _, tt := range tests {
		id := base()
		tt.edit(&id)
		diff := strings.Join(base().meta().Diff(id.meta()), "; ")
		if (tt.want == "") != (diff == "") || !strings.Contains(diff, tt.want) {
			t.Errorf("%s: difference %q, want %q", tt.name, diff, tt.want)
		}
	}
}

// journalState makes the journal an earlier run left at path.
type journalState func(t *testing.T, path string, meta journal.Meta)

func interrupted(t *testing.T, path string, meta journal.Meta) {
	t.Helper()
	j, err := journal.Create(context.Background(), path, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Record(journal.Entry{Row: 1, Key: 42, Err: "no address", Kind: "input"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func finished(t *testing.T, path string, meta journal.Meta) {
	t.Helper()
	interrupted(t, path, meta)
	j, err := journal.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	if err := j.Complete(1); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	id := Identity{Input: journal.Input{Path: "/in.csv", Size: 1, SHA256: "ab"}, BaseURL: "https://api.example.com"}
	other := id
	other.BaseURL = "https://other.example.com"
	tests := []struct {
		name    string
		p       Policy
		before  journalState // nil: no journal
		written journal.Meta // what before wrote
		usage   string       // a UsageError saying this
		fatal   string       // another error saying this
		resumed bool         // row 1 comes from the journal
		log     string       // in the log
		none    bool         // no journal is kept
		lock    bool         // another run holds the journal
		idErr   error        // the identity cannot be had
	}{
		{name: "a new journal", p: Policy{Mode: "auto", Live: true}},
		{name: "--resume without a journal", p: Policy{Mode: "auto", Live: true, Resume: true},
			log: "--resume: no journal of an earlier run: starting from the first row"},
		{name: "--resume", p: Policy{Mode: "auto", Live: true, Resume: true}, before: interrupted, written: id.meta(),
			resumed: true, log: "--resume: the journal holds 1 verified rows"},
		{name: "--resume of a finished run replays it", p: Policy{Mode: "auto", Live: true, Resume: true}, before: finished,
			written: id.meta(), resumed: true},
		{name: "no --resume over an unfinished journal", p: Policy{Mode: "auto", Live: true}, before: interrupted,
			written: id.meta(), usage: "holds 1 finished rows of an interrupted run"},
		{name: "no --resume over a finished journal", p: Policy{Mode: "auto", Live: true}, before: finished,
			written: id.meta(), log: "replacing the journal of a finished run"},
		{name: "--resume of another run", p: Policy{Mode: "auto", Live: true, Resume: true}, before: interrupted,
			written: other.meta(), usage: "--resume: " /* path */},
		{name: "--restart", p: Policy{Mode: "auto", Live: true, Restart: true}, before: interrupted, written: other.meta(),
			log: "--restart: discarding the journal of an interrupted run (1 finished rows)"},
		{name: "a journal in use", p: Policy{Mode: "auto", Live: true, Resume: true}, before: interrupted, written: id.meta(),
			lock: true, fatal: "another run is writing the same outputs"},
		{name: "no journal against the embedded service", p: Policy{Mode: "auto"}, none: true},
		{name: "--journal on over stdin", p: Policy{Mode: "on", Stdin: true}, none: true,
			log: "no journal: stdin cannot be read twice, so a run over stdin keeps no journal; starting from the first row"},
		{name: "the identity fails", p: Policy{Mode: "on"}, idErr: errors.New("no reference"), fatal: "no reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv.journal")
			if tt.before != nil {
				tt.before(t, path, tt.written)
			}
			if tt.lock {
				j, err := journal.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
			}
			// A temporary output of a killed run.
			stale := filepath.Join(dir, ".out.csv.tmp-123")
			if err := os.WriteFile(stale, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			var logs bytes.Buffer
			r, err := tt.p.Open(context.Background(), path, "", func() (Identity, error) { return id, tt.idErr },
				[]string{filepath.Join(dir, "out.csv")}, zerolog.New(&logs))
			var ue *UsageError
			switch {
			case tt.usage != "":
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.usage) {
					t.Fatalf("Open: %v, want a UsageError saying %q", err, tt.usage)
				}
			case tt.fatal != "":
				if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), tt.fatal) {
					t.Fatalf("Open: %v, want a fatal error saying %q", err, tt.fatal)
				}
			case err != nil:
				t.Fatalf("Open: %v", err)
			}
			if !strings.Contains(logs.String(), tt.log) {
				t.Errorf("log lacks %q:\n%s", tt.log, &logs)
			}
			if err != nil {
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Error("a refused run changed the journal")
				}
				if _, err := os.Stat(stale); err != nil {
					t.Errorf("a refused run removed a temporary output: %v", err)
				}
				return
			}
			defer r.Abandon()
			if _, err := os.Stat(stale); !os.IsNotExist(err) {
				t.Errorf("the temporary output of a killed run is still there: %v", err)
			}
			if (r.Journal() == nil) != tt.none {
				t.Fatalf("journal %v, want none: %v", r.Journal(), tt.none)
			}
			if tt.none {
				return
			}
			_, found, err := r.Journal().Lookup(1, 42)
			if err != nil || found != tt.resumed {
				t.Errorf("row 1 from the journal: %v (%v), want %v", found, err, tt.resumed)
			}
		})
	}
}

func TestPolicyMayKeep(t *testing.T) {
	tests := []struct {
		p    Policy
		want bool
	}{
		{Policy{Mode: "auto"}, true}, // the embedded service keeps one when one is there
		{Policy{Mode: "on"}, true},
		{Policy{Mode: "auto", Live: true}, true},
		{Policy{Mode: "off", Live: true}, false},
		{Policy{Mode: "on", Stdin: true}, false},
	}
	for _, tt := range tests {
		if got := tt.p.MayKeep(); got != tt.want {
			t.Errorf("%+v.MayKeep() = %v, want %v", tt.p, got, tt.want)
		}
	}
}
