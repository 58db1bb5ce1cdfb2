package table

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// raceDB is a table that lacks column "b" when first described; the set-up
// adding it fails, and a second look shows it (added by another run) or
// not (addedBy false).
type raceDB struct {
	Database
	addedBy bool
	reads   int
	setups  int
}

var errDuplicateColumn = errors.New("column \"b\" of relation \"t\" already exists")

func (d *raceDB) Describe(context.Context, Name) (TableInfo, error) {
	d.reads++
	info := TableInfo{Exists: true, Writable: true, Priv: Privileges{Alter: true, Insert: true, Update: true, Delete: true}}
	for _, c := range []string{"id", "a", "b"} {
		if c == "b" && (d.reads == 1 || !d.addedBy) {
			continue
		}
		info.Columns = append(info.Columns, ColumnInfo{Name: c, Decl: "text", Class: Text, Exact: true})
	}
	return info, nil
}
func (d *raceDB) Setup(context.Context, []Statement) error                       { d.setups++; return errDuplicateColumn }
func (d *raceDB) SQLType(Type) string                                            { return "text" }
func (d *raceDB) UniqueKey(context.Context, Name, string) (bool, error)          { return true, nil }
func (d *raceDB) Target(context.Context, Name, string, []Column) (Target, error) { return nil, nil }

// TestOpenTargetColumnAddedMeanwhile: two runs starting together both find
// a column missing; the one whose set-up fails because the other added it
// goes on, and a failure with the column still missing stops the run after
// one more try.
func TestOpenTargetColumnAddedMeanwhile(t *testing.T) {
	cols := []Column{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		name    string
		addedBy bool
		wantErr error
		setups  int
	}{
		{"added by another run", true, nil, 1},
		{"still missing", false, errDuplicateColumn, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &raceDB{addedBy: tc.addedBy}
			_, err := OpenTarget(context.Background(), db, Name{Table: "t"}, "id", Text, slices.Clone(cols))
			if !errors.Is(err, tc.wantErr) || db.setups != tc.setups {
				t.Fatalf("OpenTarget: %v after %d set-ups, want %v after %d", err, db.setups, tc.wantErr, tc.setups)
			}
		})
	}
}
