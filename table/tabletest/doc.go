// Package tabletest is the behaviour every table.Database must have, as
// tests: each driver's tests run Run against a real database of its kind.
package tabletest
