// Package needs lets a test that depends on a program of the machine
// (Chromium, the PostgreSQL server) skip when it is missing, in a way the
// Makefile can count: the skip message starts with Marker. Under CI
// (CI=true) a missing program fails the test instead, so that tests
// cannot silently stop running there. It is imported by tests only.
package needs
