package table

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/writers"
)

// ErrNoDecisions marks a review table written before review tables had the
// decision and edit_ columns.
var ErrNoDecisions = fmt.Errorf("%w: the review table has no %s column", ErrNoColumn, writers.DecisionColumn)

// RowColumn is the review stream's first column: the review row's number
// among the input's rows in id order, as the enriched stream numbers them.
const RowColumn = "row"

// Join reads a run back from its tables, for addrclean apply and report:
// the input (a table, or a query) joined on its id column with the
// out-table and the review table of a run. The out-table holds no input
// columns, so the input is read from the input table again.
type Join struct {
	DB Database
	// Input is the SELECT of the input rows, unordered (TableQuery without
	// an order, or the user's --query).
	Input string
	// Key is the id column of the input and the key of the tables.
	Key string
	// Out and Review are the run's out-table and review table.
	Out, Review Name
}

// InputQuery is the SELECT of table n's rows matching where (may be empty),
// in no order.
func InputQuery(n Name, where string) string {
	q := "SELECT * FROM " + n.SQL()
	if strings.TrimSpace(where) != "" {
		q += " WHERE (" + where + "\n)"
	}
	return q
}

// InputColumns returns the input's columns, reading no row; with Key
// set, it must be one of them.
func (j Join) InputColumns(ctx context.Context) ([]Column, error) {
	rows, err := j.DB.Select(ctx, "SELECT * FROM ("+j.input()+") AS i LIMIT 0")
	if err != nil {
		return nil, err
	}
	cols := rows.Columns()
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if j.Key != "" && !slices.ContainsFunc(cols, func(c Column) bool { return c.Name == j.Key }) {
		return nil, fmt.Errorf("%w: the input has no id column %q", ErrNoColumn, j.Key)
	}
	return cols, nil
}

func (j Join) input() string {
	return strings.TrimRight(strings.TrimSpace(j.Input), "; \t\n")
}

// on is the join condition of the input i with table t (of n) on the key:
// the key columns compared as they are, so that the table's key index
// serves the join (SQLite cannot use it through a CAST, and joined 100,000
// rows in minutes instead of a second), or as text when their types
// differ, so that an integer id still matches a text key.
func (j Join) on(t string, in []Column, keyType Type) string {
	k := QuoteIdent(j.Key)
	for _, c := range in {
		if c.Name == j.Key && c.Type == keyType {
			return fmt.Sprintf("%s.%s = i.%s", t, k, k)
		}
	}
	return fmt.Sprintf("CAST(%s.%s AS TEXT) = CAST(i.%s AS TEXT)", t, k, k)
}

// need checks that table n has the columns cols, and returns the type of
// its key.
func (j Join) need(ctx context.Context, n Name, what string, cols []string) (Type, error) {
	have, err := j.DB.Columns(ctx, n)
	if err != nil {
		return Text, fmt.Errorf("%s %s: %w", what, n, err)
	}
	for _, c := range append([]string{j.Key}, cols...) {
		if !slices.ContainsFunc(have, func(h Column) bool { return h.Name == c }) {
			if c == writers.DecisionColumn {
				return Text, fmt.Errorf("%s %s: %w (written by an older addrclean: run addrclean run again, which adds it)", what, n, ErrNoDecisions)
			}
			return Text, fmt.Errorf("%w: %s %s has no column %q", ErrNoColumn, what, n, c)
		}
	}
	i := slices.IndexFunc(have, func(h Column) bool { return h.Name == j.Key })
	return have[i].Type, nil
}

// OpenEnriched streams every input row in id order, numbered 1, 2, ..., with
// the out-table's av_ columns after the input's, then its input_label
// (empty for a row the out-table lacks): the shape of an enriched file, for
// runfile.NewEnriched.
func (j Join) OpenEnriched(ctx context.Context, name string) (*Source, error) {
	keyType, err := j.need(ctx, j.Out, "out-table", writers.EnrichedColumns)
	if err != nil {
		return nil, err
	}
	in, err := j.InputColumns(ctx)
	if err != nil {
		return nil, err
	}
	var sel []string
	for _, c := range in {
		sel = append(sel, "i."+QuoteIdent(c.Name))
	}
	sel = append(sel, avColumns("e.")...)
	// An out-table of an older addrclean may lack input_label: NULL then,
	// which apply takes for unknown.
	label := "NULL"
	if have, err := j.DB.Columns(ctx, j.Out); err == nil && slices.ContainsFunc(have, func(c Column) bool { return c.Name == InputLabel }) {
		label = "e." + QuoteIdent(InputLabel)
	}
	sel = append(sel, label+" AS "+QuoteIdent(InputLabel))
	query := fmt.Sprintf("SELECT %s FROM (%s) AS i LEFT JOIN %s AS e ON %s ORDER BY i.%s",
		strings.Join(sel, ", "), j.input(), j.Out.SQL(), j.on("e", in, keyType), QuoteIdent(j.Key))
	return OpenSource(ctx, j.DB, query, name)
}

// OpenReview streams the review table's rows in the order of OpenEnriched's rows:
// RowColumn (empty for a review row whose id no input row has), the
// input's cells (the id cell is the review row's own), the review columns
// and the decision columns: the shape of a review file, for
// runfile.NewReview.
func (j Join) OpenReview(ctx context.Context, name string) (*Source, error) {
	keyType, err := j.need(ctx, j.Review, "review table", append(slices.Clone(writers.ReviewColumns), writers.DecisionColumns...))
	if err != nil {
		return nil, err
	}
	in, err := j.InputColumns(ctx)
	if err != nil {
		return nil, err
	}
	k := QuoteIdent(j.Key)
	sel := []string{"i.addrclean_row AS " + QuoteIdent(RowColumn)}
	for _, c := range in {
		if c.Name == j.Key {
			sel = append(sel, fmt.Sprintf("CAST(r.%s AS TEXT) AS %s", k, k))
			continue
		}
		sel = append(sel, "i."+QuoteIdent(c.Name))
	}
	for _, c := range append(slices.Clone(writers.ReviewColumns), writers.DecisionColumns...) {
		sel = append(sel, "r."+QuoteIdent(c))
	}
	query := fmt.Sprintf("SELECT %s FROM %s AS r LEFT JOIN (SELECT s.*, row_number() OVER (ORDER BY s.%s) AS addrclean_row FROM (%s) AS s) AS i ON %s ORDER BY i.addrclean_row",
		strings.Join(sel, ", "), j.Review.SQL(), k, j.input(), j.on("r", in, keyType))
	return OpenSource(ctx, j.DB, query, name)
}

// OpenOutTable streams out-table n, a run's enriched results, for the
// report: its key column (the first that is not an av_ column), the av_
// columns, then av_duplicates and av_first_row worked out by the database
// as the file writers do (rows numbered in key order), so that the report
// has its duplicates section.
func OpenOutTable(ctx context.Context, db Database, n Name, name string) (*Source, error) {
	have, err := db.Columns(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	key := ""
	for _, c := range have {
		if !strings.HasPrefix(c.Name, "av_") {
			key = c.Name
			break
		}
	}
	j := Join{DB: db, Key: key, Out: n}
	if _, err := j.need(ctx, n, "out-table", writers.EnrichedColumns); err != nil {
		return nil, err
	}
	q := QuoteIdent
	sel := append([]string{q(key)}, avColumns("")...)
	id := q("av_address_id")
	noID := fmt.Sprintf("%s IS NULL OR %s = ''", id, id)
	query := fmt.Sprintf(`SELECT %s,
		CASE WHEN %s THEN NULL ELSE count(*) OVER (PARTITION BY %s) END AS av_duplicates,
		CASE WHEN %s THEN NULL ELSE min(addrclean_row) OVER (PARTITION BY %s) END AS av_first_row
		FROM (SELECT *, row_number() OVER (ORDER BY %s) AS addrclean_row FROM %s) AS e ORDER BY addrclean_row`,
		strings.Join(sel, ", "), noID, id, noID, id, q(key), n.SQL())
	return OpenSource(ctx, db, query, name)
}

// avColumns is the select list of the av_ columns of an out-table (through
// prefix, an alias and a dot, or ""), in the order of the enriched file.
// av_changes is left out: apply and report do not read it, and an
// out-table written before it existed lacks it until the next run.
func avColumns(prefix string) []string {
	var sel []string
	for _, c := range Columns(Enriched, false) {
		if c.Name == VerifiedAt || c.Name == writers.ChangesColumn {
			continue
		}
		q := prefix + QuoteIdent(c.Name)
		if c.Type == Bool {
			// SQLite keeps booleans as 1/0: spell them as the files do.
			q = fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL WHEN %s THEN 'true' ELSE 'false' END AS %s", q, q, QuoteIdent(c.Name))
		}
		sel = append(sel, q)
	}
	return sel
}
