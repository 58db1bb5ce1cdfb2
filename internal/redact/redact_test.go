package redact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// dsnErrors are errors whose text quotes the DSN raw, as drivers and the
// standard library write them: pgx's own (which mask the password
// themselves in this version), net/url's (which never do), and a driver
// that quotes the URL as it was given.
func dsnErrors(raw string) map[string]error {
	errs := map[string]error{
		"wrapped":  fmt.Errorf("connecting to %s: connection refused", raw),
		"quoted":   fmt.Errorf("cannot parse %q: bad", raw),
		"backtick": fmt.Errorf("cannot parse `%s`: bad", raw),
		"at end":   fmt.Errorf("dial %s", raw),
	}
	if _, err := url.Parse(raw + ":x"); err != nil { // invalid port: url quotes the whole URL
		errs["net/url"] = err
	}
	_, err := pgconn.ParseConfig(raw + "?connect_timeout=x")
	errs["pgx parse"] = err
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no connection is tried: pgx says why not, naming user and database
	_, err = pgconn.Connect(ctx, raw)
	errs["pgx connect"] = err
	return errs
}

// TestScrubPasswords: a password of any length, as written in the URL or
// percent-encoded, is in no error's text after Scrub with the URL's
// secrets; the rest of the text is as it was.
func TestScrubPasswords(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		hidden    []string // substrings that must not remain
	}{
		{"1 char", "postgres://u:Q@db.example/crm", []string{":Q@"}},
		{"2 chars", "postgres://u:ab@db.example/crm", []string{":ab@"}}, // "ab" is in "database"
		{"3 chars", "postgres://u:s3c@db.example/crm", []string{"s3c"}},
		{"long", "postgres://u:correct-horse@db.example/crm", []string{"correct-horse"}},
		{"percent-encoded 1", "postgres://u:%40@db.example/crm", []string{"%40", ":@@"}},
		{"percent-encoded 2", "postgres://u:a%2F@db.example/crm", []string{"a%2F", "a/"}},
		{"percent-encoded long", "postgres://u:p%40ss%20word@db.example/crm", []string{"p%40ss%20word", "p@ss word"}},
		{"password parameter 2", "postgres://u@db.example/crm?password=ab", []string{"=ab"}},
		{"sslpassword 1", "postgres://u@db.example/crm?sslmode=require&sslpassword=k", []string{"=k"}},
		{"upper-case parameter", "postgres://u@db.example/crm?PassWord=zz", []string{"=zz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secrets := URLPasswords(tc.raw)
			if len(secrets) == 0 {
				t.Fatalf("URLPasswords(%q) found none", tc.raw)
			}
			for kind, err := range dsnErrors(tc.raw) {
				if err == nil {
					continue
				}
				got := Scrub(err, secrets...)
				for _, h := range tc.hidden {
					if strings.Contains(got.Error(), h) {
						t.Errorf("%s: %q shows %q", kind, got, h)
					}
				}
				if !errors.Is(got, err) {
					t.Errorf("%s: errors.Is lost", kind)
				}
				if strings.Contains(err.Error(), "db.example") && !strings.Contains(got.Error(), "db.example") {
					t.Errorf("%s: %q lost the host", kind, got)
				}
			}
		})
	}
}

// TestScrubLeavesText: text that holds no password is left as it was,
// even when a short secret is a piece of its words.
func TestScrubLeavesText(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		secrets   []string
	}{
		{"1-char secret", "relation \"accounts\" does not exist at a table", []string{"a"}},
		{"2-char secret", "column \"addr_line1\" of relation \"ab\" is ambiguous", []string{"ad", "ab"}},
		{"URL without password", "connecting to postgres://u@db.example:5432/crm: refused", []string{"u"}},
		{"host:port", "dial tcp 127.0.0.1:5432: connect: connection refused", []string{"12"}},
		{"word password", "password authentication failed for user \"u\"", []string{"u"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := errors.New(tc.msg)
			if got := Scrub(base, tc.secrets...); got != base {
				t.Fatalf("Scrub changed %q into %q", tc.msg, got)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	base := errors.New("cannot connect to postgres://u:s3cret@h/db?sslpassword=k3y2")
	for _, tc := range []struct {
		name    string
		secrets []string
		want    string
	}{
		{"no secrets given: the URL's are masked", nil, "cannot connect to postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
		{"both", URLPasswords("postgres://u:s3cret@h/db?sslpassword=k3y2"), "cannot connect to postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
		{"too short to replace bare", []string{"h"}, "cannot connect to postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Scrub(base, tc.secrets...)
			if got.Error() != tc.want || !errors.Is(got, base) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if Scrub(nil, "x") != nil {
		t.Fatal("nil error")
	}
	if !errors.Is(Scrub(io.EOF, "EOF"), io.EOF) {
		t.Fatal("errors.Is lost")
	}
}

// TestText: the places a password is written in, whatever its length.
func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:a@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:ab@h/db and postgres://v:cd@k/db", "postgres://u:xxxxx@h/db and postgres://v:xxxxx@k/db"},
		{"parse \"postgres://u:ab@h:x/db\": invalid port", "parse \"postgres://u:xxxxx@h:x/db\": invalid port"},
		{"`postgres://u:a@b@h/db`", "`postgres://u:xxxxx@h/db`"}, // an unescaped @: masked whole
		{"postgres://u@h/db?password=ab&sslmode=require", "postgres://u@h/db?password=xxxxx&sslmode=require"},
		{"host=h user=u password=ab dbname=d", "host=h user=u password=xxxxx dbname=d"},
		{"host=h password='a b\\'c' dbname=d", "host=h password=xxxxx dbname=d"},
		{"SSLPASSWORD=q", "SSLPASSWORD=xxxxx"},
		{"mypassword=kept", "mypassword=kept"},
		{"no url here: a:b@c", "no url here: a:b@c"},
		{"", ""},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURLPasswords(t *testing.T) {
	got := URLPasswords("postgres://u:p%40ss@h/db?Password=q&x=1")
	for _, want := range []string{"p@ss", "p%40ss", "q"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q not in %q", want, got)
		}
	}
	if URLPasswords("postgres://u@h/db") != nil || URLPasswords("%zz://") != nil {
		t.Error("passwords in a URL without one")
	}
}

// TestTextSpellings: every spelling of a password place a message can
// hold is masked; prose about passwords is left as it was.
func TestTextSpellings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// A URL is not cut at a space, a quote or a backtick.
		{"connect `postgres://u:a b@h/db`", "connect `postgres://u:xxxxx@h/db`"},
		{`parse "postgres://u:q\"z@h:x/db"`, `parse "postgres://u:xxxxx@h:x/db"`},
		{`parse "postgres://u:q'z@h:x": invalid port ":x" after host`, `parse "postgres://u:xxxxx@h:x": invalid port ":x" after host`},
		{"postgres://u:a@b@h?x=1", "postgres://u:xxxxx@h?x=1"},
		{"postgres://u:a@h and postgres://v:b@k/db", "postgres://u:xxxxx@h and postgres://v:xxxxx@k/db"},
		{"postgres://u@h:5432/db@x", "postgres://u@h:5432/db@x"}, // an '@' after the path is no user information
		// A port, then prose quoting an e-mail address: nothing to mask, and
		// the error must stay readable.
		{`writing postgres://u@h: ERROR: invalid input syntax for type boolean: "ann@example.com" (SQLSTATE 22P02)`,
			`writing postgres://u@h: ERROR: invalid input syntax for type boolean: "ann@example.com" (SQLSTATE 22P02)`},
		{"postgres://admin@server:pw@h/db", "postgres://admin@server:xxxxx@h/db"}, // a user holding an '@'
		// A setting after any non-word character, spaces around '='.
		{"password = ab", "password = xxxxx"},
		{"password\t=\tab dbname=d", "password\t=\txxxxx dbname=d"},
		{"[password=ab]", "[password=xxxxx]"},
		{"(password=ab)", "(password=xxxxx)"},
		{"{sslpassword=ab}, next", "{sslpassword=xxxxx}, next"},
		{"x,password=ab;y", "x,password=xxxxx"},
		{"-password=ab", "-password=xxxxx"},
		{"PGPASSWORD=ab psql", "PGPASSWORD=xxxxx psql"},
		{"?pass%77ord=ab&x=1", "?pass%77ord=xxxxx&x=1"}, // percent-encoded, as pgx and net/url decode it
		{"?%70ASSWORD=ab&ssl%50assword=cd", "?%70ASSWORD=xxxxx&ssl%50assword=xxxxx"},
		{"?pass%7word=kept", "?pass%7word=kept"},
		{`"host=h password=ab"`, `"host=h password=xxxxx"`},
		{`"?password=q\"z&sslmode=x"`, `"?password=xxxxx&sslmode=x"`},
		{`password="a b" dbname=d`, `password=xxxxx dbname=d`},
		{`"password='a\\'b' x"`, `"password=xxxxx x"`}, // %q of password='a\'b'
		{"password=it's", "password=xxxxx"},
		{"password=a)b", "password=xxxxx"},
		{"password=", "password=xxxxx"},
		// Prose and other words are not settings.
		{"password reset sent to the database", "password reset sent to the database"},
		{"password authentication failed for user \"u\"", "password authentication failed for user \"u\""},
		{"mypassword=kept pass_password=kept", "mypassword=kept pass_password=kept"},
		{"the password: is wrong", "the password: is wrong"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTextRealErrors: the error texts net/url, pgx and fmt write for a URL
// or a key=value string that holds a password show none of it, whatever
// characters the password holds (ZZ and QQ mark its two ends).
func TestTextRealErrors(t *testing.T) {
	libpqQuote := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	for _, pw := range []string{"ZZQQ", "ZZ QQ", `ZZ"QQ`, "ZZ`QQ", "ZZ'QQ", "ZZ@QQ", `ZZ\QQ`, "ZZ)QQ", "ZZ]QQ", "ZZ:QQ", "ZZ=QQ"} {
		raws := []string{
			"postgres://u:" + pw + "@h:x/db", // invalid port: net/url quotes the URL
			"postgres://u:" + pw + "@h/db",
			"host=h password='" + libpqQuote.Replace(pw) + "' dbname=d",
		}
		if !strings.ContainsAny(pw, " &") {
			raws = append(raws, "postgres://u@h:x/db?sslmode=x&password="+pw, "postgres://u@h/db?password="+pw+"&x=1")
		}
		if !strings.ContainsAny(pw, ` '\`) {
			raws = append(raws, "host=h password="+pw+" dbname=d")
		}
		for _, raw := range raws {
			errs := map[string]error{
				"%q":       fmt.Errorf("cannot parse %q: bad", raw),
				"%s":       fmt.Errorf("connecting to %s: refused", raw),
				"backtick": fmt.Errorf("cannot parse `%s`: bad", raw),
				"parens":   fmt.Errorf("open (%s)", raw),
				"brackets": fmt.Errorf("open [%s]", raw),
			}
			if _, err := url.Parse(raw); err != nil {
				errs["net/url"] = err
			}
			if strings.Contains(pw, "@") {
				// pgx splits at the first '@' and shows the rest as a host
				// name, outside any URL: table.ParseURL refuses such a URL
				// before a driver sees it.
				for kind, err := range errs {
					checkHidden(t, kind, raw, err)
				}
				continue
			}
			if _, err := pgconn.ParseConfig(raw + "&connect_timeout=x"); err != nil {
				errs["pgx parse"] = err
			}
			if _, err := pgconn.ParseConfig(raw); err != nil {
				errs["pgx parse as is"] = err
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := pgconn.Connect(ctx, raw); err != nil {
				errs["pgx connect"] = err
			}
			for kind, err := range errs {
				checkHidden(t, kind, raw, err)
			}
		}
	}
}

func checkHidden(t *testing.T, kind, raw string, err error) {
	t.Helper()
	if got := Text(err.Error()); strings.Contains(got, "ZZ") || strings.Contains(got, "QQ") {
		t.Errorf("%s of %q: %q", kind, raw, got)
	}
}

// FuzzText: Text never panics, and a password written after "password="
// or in a URL's user information, ended as Text documents, is not shown.
func FuzzText(f *testing.F) {
	f.Add("cannot parse `postgres://u:", "ZZQQ", "@h/db`: bad")
	f.Add("connect [host=h password=", "ZZQQ", " dbname=d]")
	f.Fuzz(func(t *testing.T, before, pw, after string) {
		got := Text(before + pw + after)
		if len(pw) < 4 || strings.ContainsAny(pw, "\\\"'`)]}>&/?#@: \t\r\n%=") {
			return
		}
		key := strings.TrimSuffix(before, "password=")
		if (key != before && (key == "" || !isWord(key[len(key)-1])) && strings.HasPrefix(after, " ")) ||
			(strings.HasSuffix(before, "postgres://u:") && strings.HasPrefix(after, "@h/") && !strings.ContainsAny(before, "@/?#")) {
			if strings.Contains(got, pw) {
				t.Fatalf("Text(%q) = %q shows %q", before+pw+after, got, pw)
			}
		}
	})
}
