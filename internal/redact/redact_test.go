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
