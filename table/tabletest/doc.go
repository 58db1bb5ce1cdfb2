// Package tabletest holds what the tests of tables share: opening a
// database, running set-up statements, reading a query back, and the
// attacks on --where and --query. Its own tests are the behaviour every
// table.Database must have, run against a real database of each kind.
package tabletest
