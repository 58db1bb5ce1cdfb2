package sqlite_test

import (
	_ "github.com/addrclean/addrclean/table/sqlite"
)

// types are SQLite's DDL type names for tabletest.Harness. The suites every
// database kind must pass run in tabletest's tests.
var types = map[string]string{"int": "INTEGER", "text": "TEXT", "bool": "BOOLEAN", "float": "REAL", "timestamp": "TIMESTAMP"}
