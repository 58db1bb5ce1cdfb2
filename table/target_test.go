package table

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// raceDB is a table that lacks column "b" when first read; adding it fails
// and a second read shows it (added) or not (addedBy false).
type raceDB struct {
	Database
	addedBy bool
	reads   int
}

var errDuplicateColumn = errors.New("column \"b\" of relation \"t\" already exists")

func (d *raceDB) Columns(context.Context, Name) ([]Column, error) {
	d.reads++
	cols := []Column{{Name: "id"}, {Name: "a"}}
	if d.reads > 1 && d.addedBy {
		cols = append(cols, Column{Name: "b"})
	}
	return cols, nil
}
func (d *raceDB) Exec(context.Context, string) error                             { return errDuplicateColumn }
func (d *raceDB) SQLType(Type) string                                            { return "text" }
func (d *raceDB) UniqueKey(context.Context, Name, string) (bool, error)          { return true, nil }
func (d *raceDB) Target(context.Context, Name, string, []Column) (Target, error) { return nil, nil }

// TestOpenTargetColumnAddedMeanwhile: two runs starting together both find
// a column missing; the one whose ALTER fails because the other added it
// goes on, and a failure with the column still missing stops the run.
func TestOpenTargetColumnAddedMeanwhile(t *testing.T) {
	cols := []Column{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		name    string
		addedBy bool
		wantErr error
	}{
		{"added by another run", true, nil},
		{"still missing", false, errDuplicateColumn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &raceDB{addedBy: tc.addedBy}
			_, err := OpenTarget(context.Background(), db, Name{Table: "t"}, "id", Text, slices.Clone(cols))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("OpenTarget: %v, want %v", err, tc.wantErr)
			}
		})
	}
}
