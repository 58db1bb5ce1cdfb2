package endpoint_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/writers"
)

// memSource is a kind of source added from outside the package, as
// docs/internals.md shows: rows held in memory, named mem:NAME.
type memSource struct {
	name string
	rows [][]string
	next int
}

func init() {
	endpoint.Register(endpoint.Kind{
		Name:   "memory",
		Claims: func(input string) bool { return strings.HasPrefix(input, "mem:") },
		Plan: func(s endpoint.Spec) (endpoint.Source, error) {
			return &memSource{name: s.Input, rows: [][]string{{"street", "town"}, {"1 Main St", "Cork"}, {"2 High St", "Dublin"}}}, nil
		},
	})
}

func (m *memSource) Info() endpoint.Info { return endpoint.Info{Name: m.name, Key: m.name} }
func (m *memSource) Check() error        { return nil }
func (m *memSource) Outputs(out, review string) (string, string, error) {
	if out == "" || review == "" {
		return "", "", errors.New("mem: name -o and --review")
	}
	return out, review, nil
}
func (m *memSource) Identity(context.Context) (journal.Input, map[string]string, error) {
	return journal.Input{Path: m.name}, nil, nil
}
func (m *memSource) Open(context.Context, readers.Options, readers.MappingSpec, zerolog.Logger) (readers.Reader, error) {
	return m, nil
}
func (m *memSource) ReadError(_ context.Context, err error) error { return err }
func (m *memSource) Close() error                                 { return nil }
func (m *memSource) Header() []string                             { return m.rows[0] }
func (m *memSource) Next(context.Context) (record.Row, error) {
	if m.next++; m.next >= len(m.rows) {
		return record.Row{}, io.EOF
	}
	return record.Row{Num: m.next, Cells: m.rows[m.next]}, nil
}

// TestRegisteredKind: a kind registered from another package is found by
// its names, opened and written through the plan like the built-in kinds;
// what it does not offer (shards, reading back for the report, apply) is
// refused in words; table outputs treat it as they treat a file.
func TestRegisteredKind(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out, review := filepath.Join(dir, "o.csv"), filepath.Join(dir, "r.csv")
	p, err := endpoint.New(endpoint.Spec{Input: "mem:crm", Out: out, Review: review})
	if err != nil {
		t.Fatal(err)
	}
	if info := p.Info(); info.Name != "mem:crm" || info.Shardable {
		t.Errorf("info %+v", info)
	}
	ropts := readers.Options{}
	if o, r, err := p.Outputs(&ropts); err != nil || o != out || r != review {
		t.Fatalf("outputs %q %q %v", o, r, err)
	}
	src, err := p.Open(ctx, ropts, readers.MappingSpec{}, zerolog.Nop(), true, out, review)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ws, err := p.OpenOutputs(ctx, src, "", writers.Options{}, zerolog.Nop())
	if err != nil || len(ws) != 2 {
		t.Fatalf("%d outputs, %v", len(ws), err)
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
	if _, err := endpoint.New(endpoint.Spec{Input: "mem:crm", OutTable: "av"}); err == nil || !strings.Contains(err.Error(), "need --out-db DBURL") {
		t.Errorf("an out-table without --out-db: %v", err)
	}
	if _, err := endpoint.PlanReadback("mem:crm", ""); err == nil || !strings.Contains(err.Error(), "no enriched output to read back from a memory") {
		t.Errorf("report of a kind without read-back: %v", err)
	}
	if _, err := endpoint.PlanApply(endpoint.ApplySpec{Args: []string{"mem:crm"}}); err == nil || !strings.Contains(err.Error(), "apply cannot read a run's outputs from a memory") {
		t.Errorf("apply over a kind without apply: %v", err)
	}
}
