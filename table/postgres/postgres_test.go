package postgres_test

import (
	"os"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// types are PostgreSQL's DDL type names for tabletest.Harness. The suites
// every database kind must pass run in tabletest's tests.
var types = map[string]string{"int": "bigint", "text": "text", "bool": "boolean", "float": "double precision",
	"timestamp": "timestamp"}
