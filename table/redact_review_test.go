package table

import (
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
