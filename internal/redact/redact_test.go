package redact

import (
	"errors"
	"io"
	"slices"
	"testing"
)

func TestScrub(t *testing.T) {
	base := errors.New("cannot connect to postgres://u:s3cret@h/db?sslpassword=k3y2")
	for _, tc := range []struct {
		name    string
		secrets []string
		want    string
	}{
		{"none", nil, base.Error()},
		{"both", URLPasswords("postgres://u:s3cret@h/db?sslpassword=k3y2"), "cannot connect to postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
		{"too short to replace", []string{"h"}, base.Error()},
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
