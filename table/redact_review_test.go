package table

import (
	"errors"
	"strings"
	"testing"
)

// TestParseURLHidesEveryPassword: a URL that does not parse is shown with
// every password masked, however many password parameters it repeats,
// and with the user information masked to its last '@' whatever it holds.
func TestParseURLHidesEveryPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://u@h:bad/db?password=ab&password=cd&password=ef",
		"postgres://u@h:bad/db?sslmode=x&password=ab&password=cd",
		"postgres://u@h:bad/db?sslpassword=ab&sslpassword=cd",
		`postgres://u:ab"cd@h:bad/db`, // a URL cut at a quote or a space would show it
		"postgres://u:ab cd@h:bad/db",
	} {
		_, err := ParseURL(raw)
		if err == nil {
			t.Fatalf("%s parsed", raw)
		}
		for _, pw := range []string{"=ab", "=cd", "=ef"} {
			if strings.Contains(err.Error(), pw) {
				t.Errorf("ParseURL(%q): %v shows a password (%s)", raw, err, pw)
			}
		}
	}
}

// TestParseURLMasksEverySpelling: the spellings of a password in a URL
// that does not parse (ZZ and QQ mark its ends) are masked in ParseURL's
// error, which still names the host.
func TestParseURLMasksEverySpelling(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:ZZ QQ@h:bad/db",
		`postgres://u:ZZ"QQ@h:bad/db`,
		"postgresql://u:ZZ`QQ@h:bad/db",
		"postgres://u:ZZ'QQ@h:bad",
		"postgres://u@h:bad/db?PassWord=ZZQQ",
		"postgres://u@h:bad/db?x=1;password=ZZQQ",
		"postgres://u@h:bad/db?options=[password=ZZQQ]",
		"postgres://u@h:bad/db?options=(sslpassword=ZZQQ)",
		"postgres://u@h:bad/db?password = ZZQQ",
		"postgres://u@h:bad/db?pass%77ord=ZZQQ",
		"postgres://u@h:bad/db?password='ZZ QQ'",
		`postgres://u@h:bad/db?password=ZZ\"QQ`,
		"mysql://u:ZZ QQ@h/db?x=[password=ZZQQ]",
	} {
		_, err := ParseURL(raw)
		if !errors.Is(err, ErrBadURL) {
			t.Fatalf("ParseURL(%q): %v, want ErrBadURL", raw, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "ZZ") || strings.Contains(msg, "QQ") {
			t.Errorf("ParseURL(%q): %s shows a password", raw, msg)
		}
		if !strings.Contains(msg, "@h") {
			t.Errorf("ParseURL(%q): %s lost the host", raw, msg)
		}
	}
}
