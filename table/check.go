package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors of the output checks, which a caller branches on: all but ErrLock
// are the user's to fix before the run (a usage error).
var (
	// ErrInputTable marks an output table that is, or is read by, the input.
	ErrInputTable = errors.New("an output table is the input")
	// ErrRefused marks an output table that cannot take what a run writes
	// as it is: a column's type, a constraint, a privilege.
	ErrRefused = errors.New("the output table cannot take the results")
	// ErrLock marks a statement that waited longer than the lock timeout.
	ErrLock = errors.New("lock not granted")
)

// DefaultLockTimeout is how long a DDL or write statement waits for a lock
// before it fails, when Options.LockTimeout is zero.
const DefaultLockTimeout = 10 * time.Second

// Relation is a table or view as the database means it, whatever the
// spelling that named it.
type Relation struct {
	// ID tells relations of one database apart (PostgreSQL: the OID;
	// SQLite: schema and name folded to lower case).
	ID string
	// Name is the database's own spelling, schema-qualified.
	Name string
}

// ColumnInfo is an existing column of an output table, as the checks see
// it.
type ColumnInfo struct {
	Name string
	// Decl is the type as the database declares it, for messages.
	Decl string
	// Class is the kind of value the column holds, and Exact whether it
	// holds every value of that kind as written, with no length limit,
	// rounding or conversion (varchar(5), real or numeric(5,2) do not).
	Class Type
	Exact bool
	// NotNull and Default are the column's constraint and default.
	NotNull, Default bool
}

// Privileges say what the database lets this connection do to a table
// (or, for a table to create, in its schema).
type Privileges struct {
	Create, Alter, Insert, Update, Delete bool
}

// TableInfo is what the checks need to know of an output table.
type TableInfo struct {
	// Exists is false for a table to create; then only Privileges.Create,
	// Similar, NoPlace and Relation (the table it would be, when known)
	// are set.
	Exists bool
	// Relation is the existing relation; Writable is false for a view or
	// anything else that cannot take rows.
	Relation Relation
	Writable bool
	Columns  []ColumnInfo
	Priv     Privileges
	// Similar names an existing relation whose name differs only in case,
	// or a reason the table cannot be created where it would be (no
	// schema), for a table that does not exist.
	Similar string
	NoPlace string
}

// Statement is one DDL statement of a set-up and the table it changes.
type Statement struct {
	Table Name
	SQL   string
}

// Catalog is what the checks ask of a database, beside Database.
type Catalog interface {
	// Identity names the database: two connections to one database give
	// the same text, to different ones different texts.
	Identity(ctx context.Context) (string, error)
	// Resolve returns the relation that n means; false when there is none.
	Resolve(ctx context.Context, n Name) (Relation, bool, error)
	// Reads returns the relations a SELECT reads, as the database plans
	// it: views expanded to their tables, partitions and children with
	// their parents. It runs nothing but the planner, read-only.
	Reads(ctx context.Context, query string) ([]Relation, error)
	// Describe returns what the checks need of table n.
	Describe(ctx context.Context, n Name) (TableInfo, error)
	// Setup runs stmts in one transaction, each under the lock timeout, so
	// that a failure leaves the database as it was. Concurrent set-ups of
	// one database are serialised.
	Setup(ctx context.Context, stmts []Statement) error
}

// Input is what a run reads, for CheckNotInput.
type Input struct {
	DB Database
	// Table is --table (zero for a query); Query is the SELECT read.
	Table Name
	Query string
	// Shown is how messages name the input ("--table cc", "--query").
	Shown string
}

// Output is one table a run writes.
type Output struct {
	// Flag names it in messages ("--out-table"); empty for "table".
	Flag    string
	Name    Name
	Key     string
	KeyType Type
	Cols    []Column
	// Deletes is set for a table rows are deleted from (the review).
	Deletes bool
}

func (o Output) shown() string {
	if o.Flag == "" {
		return "table " + o.Name.String()
	}
	return o.Flag + " " + o.Name.String()
}

// CheckNotInput refuses an output table that the input reads: the same
// table under any spelling (schema, quotes, case where the database folds
// it), a table under a view the input reads, or a table a --query reads.
// Outputs in another database than the input's cannot be it.
func CheckNotInput(ctx context.Context, in Input, outDB Database, outs []Output) error {
	inID, err := in.DB.Identity(ctx)
	if err != nil {
		return err
	}
	outID, err := outDB.Identity(ctx)
	if err != nil {
		return err
	}
	if inID != outID {
		return nil
	}
	reads, err := in.DB.Reads(ctx, in.Query)
	if err != nil {
		return err
	}
	tableID := ""
	if in.Table.Table != "" {
		// A planner may fold a false --where away, table and all.
		r, ok, err := in.DB.Resolve(ctx, in.Table)
		if err != nil {
			return err
		}
		if ok {
			reads, tableID = append(reads, r), r.ID
		}
	}
	for _, o := range outs {
		r, ok, err := outDB.Resolve(ctx, o.Name)
		if err != nil {
			return err
		}
		if !ok || !slices.ContainsFunc(reads, func(x Relation) bool { return x.ID == r.ID }) {
			continue
		}
		how := "is read by"
		if r.ID == tableID {
			how = "is"
		}
		return fmt.Errorf("%w: %s is table %s, which %s the input (%s): input tables are never written; "+
			"name another output table", ErrInputTable, o.shown(), r.Name, how, in.Shown)
	}
	return nil
}

// Plan checks every output table against what the run will write, and
// returns the DDL that readies them, changing nothing. Every problem found
// is in the error, each naming its table and column.
func Plan(ctx context.Context, db Database, outs []Output) ([]Statement, error) {
	var stmts []Statement
	var errs []error
	seen := map[string]Output{}
	for _, o := range outs {
		info, err := db.Describe(ctx, o.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.shown(), err))
			continue
		}
		// Two spellings of one table would each write, and the review
		// delete, the other's rows.
		if p, ok := seen[info.Relation.ID]; ok && info.Relation.ID != "" {
			errs = append(errs, fmt.Errorf("%w: %s and %s are the same table %s", ErrRefused, p.shown(), o.shown(), info.Relation.Name))
			continue
		}
		seen[info.Relation.ID] = o
		s, err := plan(ctx, db, o, info)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stmts = append(stmts, s...)
	}
	return stmts, errors.Join(errs...)
}

// Prepare readies the output tables: Plan, then Apply. A caller that must
// refuse a run for other reasons between the checks and the DDL calls Plan
// and Apply itself.
func Prepare(ctx context.Context, db Database, outs []Output) error {
	stmts, err := Plan(ctx, db, outs)
	if err != nil {
		return err
	}
	return Apply(ctx, db, outs, stmts)
}

// Apply runs stmts, the DDL that Plan returned for outs, in one
// transaction. Two runs setting up the same tables at once both succeed: a
// set-up that fails is planned again and tried once more, and finds the
// other run's tables (or the change that makes them refused now).
func Apply(ctx context.Context, db Database, outs []Output, stmts []Statement) error {
	for try := 0; len(stmts) > 0; try++ {
		err := db.Setup(ctx, stmts)
		if err == nil || try == 1 || ctx.Err() != nil || errors.Is(err, ErrLock) {
			return err
		}
		if stmts, err = Plan(ctx, db, outs); err != nil {
			return err
		}
	}
	return nil
}

// plan is Plan for one table, described by info.
func plan(ctx context.Context, db Database, o Output, info TableInfo) ([]Statement, error) {
	if !info.Exists {
		switch {
		case info.NoPlace != "":
			return nil, fmt.Errorf("%w: %s: %s", ErrRefused, o.shown(), info.NoPlace)
		case info.Similar != "":
			return nil, fmt.Errorf("%w: %s does not exist, but %s does: names are matched exactly; "+
				"name that table (quoted as it is) or another one", ErrRefused, o.shown(), info.Similar)
		case !info.Priv.Create:
			return nil, fmt.Errorf("%w: %s does not exist and this user may not create it (no CREATE privilege on its schema)",
				ErrRefused, o.shown())
		}
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (%s %s PRIMARY KEY", o.Name.SQL(), QuoteIdent(o.Key), db.SQLType(o.KeyType))
		for _, c := range o.Cols {
			fmt.Fprintf(&b, ", %s %s", QuoteIdent(c.Name), db.SQLType(c.Type))
		}
		b.WriteString(")")
		return []Statement{{Table: o.Name, SQL: b.String()}}, nil
	}
	var errs []error
	refuse := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: "+format, append([]any{ErrRefused, o.shown()}, args...)...))
	}
	if !info.Writable {
		refuse("%s is not a table (a view?): results are written to tables only", info.Relation.Name)
		return nil, errors.Join(errs...)
	}
	have := map[string]ColumnInfo{}
	for _, c := range info.Columns {
		have[c.Name] = c
	}
	key, ok := have[o.Key]
	if !ok {
		return nil, fmt.Errorf("%w: table %s has no column %q to key the rows by", ErrNoColumn, o.Name, o.Key)
	}
	if key.Class != Text && key.Class != o.KeyType {
		// Text ids (C01001) in an integer key fail only when a batch is
		// written, after its calls were paid for.
		refuse("the key column %q is %s, which cannot hold the input's %s ids (make it %s)",
			o.Key, key.Decl, o.KeyType, db.SQLType(o.KeyType))
	}
	var missing []Column
	for _, c := range o.Cols {
		h, ok := have[c.Name]
		if !ok {
			missing = append(missing, c)
			continue
		}
		switch {
		case h.Class != c.Type || !h.Exact:
			refuse("column %s is %s, which cannot hold the %s values written to it (drop it, or make it %s)",
				c.Name, h.Decl, c.Type, db.SQLType(c.Type))
		case h.NotNull:
			refuse("column %s is NOT NULL, but is NULL where there is no value (drop the constraint)", c.Name)
		}
	}
	ours := func(name string) bool {
		return slices.ContainsFunc(o.Cols, func(c Column) bool { return c.Name == name })
	}
	for _, h := range info.Columns {
		switch {
		case h.Name == o.Key || ours(h.Name):
		case slices.ContainsFunc(o.Cols, func(c Column) bool { return strings.EqualFold(c.Name, h.Name) }):
			refuse("column %q differs only in case from the column %s the run writes: rename or drop it", h.Name, strings.ToLower(h.Name))
		case strings.HasPrefix(strings.ToLower(h.Name), "av_") && !knownAV(h.Name):
			refuse("column %s has the av_ prefix of the columns the run writes but is none of them: rename or drop it", h.Name)
		case h.NotNull && !h.Default:
			refuse("column %s is NOT NULL without a default: the run's new rows would have no value for it", h.Name)
		}
	}
	unique, err := db.UniqueKey(ctx, o.Name, o.Key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.shown(), err)
	}
	if !unique {
		errs = append(errs, fmt.Errorf("%w: table %s: column %q is not unique; rows are upserted by it: "+
			"add a primary key or unique index on it", ErrBadQuery, o.Name, o.Key))
	}
	for _, p := range []struct {
		ok   bool
		what string
	}{{info.Priv.Insert, "INSERT"}, {info.Priv.Update, "UPDATE"}, {info.Priv.Delete || !o.Deletes, "DELETE"},
		{info.Priv.Alter || len(missing) == 0, "ALTER (own the table) to add its missing columns"}} {
		if !p.ok {
			refuse("this user may not %s it", p.what)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var stmts []Statement
	for _, c := range missing {
		stmts = append(stmts, Statement{Table: o.Name,
			SQL: fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", o.Name.SQL(), QuoteIdent(c.Name), db.SQLType(c.Type))})
	}
	return stmts, nil
}

// knownAV reports a column name that a results table of the tool may hold.
func knownAV(name string) bool {
	return name == "av_cached" || slices.ContainsFunc(Columns(Enriched, true), func(c Column) bool { return c.Name == name }) ||
		slices.ContainsFunc(Columns(Review, false), func(c Column) bool { return c.Name == name })
}
