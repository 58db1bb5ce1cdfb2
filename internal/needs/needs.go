package needs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Marker starts the message of every skip Missing makes; internal/testsum
// looks for it in 'go test -json' output.
const Marker = "needs-missing:"

// Missing ends the test because what is not installed: a skip naming
// what and the install command, or under CI=true a failure.
func Missing(t testing.TB, what, install, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (CI=true): %s; install it with: %s", what, why, install)
	}
	t.Skip(Message(what, install, why))
}

// Message is the skip message of Missing: Marker, then what|install|why.
func Message(what, install, why string) string {
	return fmt.Sprintf("%s %s|%s|%s", Marker, what, install, why)
}

// Parse reads a line holding a Message back into what and install.
func Parse(line string) (what, install string, ok bool) {
	_, rest, ok := strings.Cut(line, Marker)
	if !ok {
		return "", "", false
	}
	parts := strings.SplitN(strings.TrimSpace(rest), "|", 3)
	if len(parts) < 2 || parts[0] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}
