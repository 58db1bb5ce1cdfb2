// Package pgtest starts a real, throwaway PostgreSQL server for tests: initdb
// on a temporary directory, the server listening only on a Unix socket in
// that directory, stopped and removed at the end.
//
// A package's TestMain starts one server with Main and stops it when the tests
// are done; tests call Require for it. Where the server binaries are missing
// the tests that need them skip, saying how to install them, except under CI
// (env CI=true), where they fail.
//
// The server is run by a small supervising shell that stops the server and
// removes its directory as soon as the test process closes the pipe to it,
// so even a test binary killed with SIGKILL leaves no server behind.
package pgtest
