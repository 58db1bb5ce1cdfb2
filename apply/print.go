package apply

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/runstats"
)

// Print reports, for a person, the decisions applied from review to
// enriched and the final rows written to out: the decisions by kind, the
// final sources, and every row to look at.
func (rep Report) Print(w io.Writer, review, enriched, out string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Applied %s to %s: %d rows written to %s\n", review, enriched, rep.Rows, out)
	fmt.Fprintf(&b, "  decisions    %s\n", runstats.Counts(rep.Decisions, []string{"accept", "keep", "edit", Undecided}))
	fmt.Fprintf(&b, "  final_source %s\n", runstats.Counts(rep.Sources, []string{SourceService, SourceInput, SourcePerson, SourceUnresolved}))
	if rep.NotVerified > 0 {
		fmt.Fprintf(&b, "  %d row(s) have no result in the out-table (added since the run): unresolved\n", rep.NotVerified)
	}
	if rep.Changed > 0 {
		fmt.Fprintf(&b, "  %d row(s) changed address since the run (the out-table verified another): unresolved until the next run\n", rep.Changed)
	}
	if rep.Outside > 0 {
		more := ""
		if int64(len(rep.OutsideIDs)) < rep.Outside {
			more = ", ..."
		}
		fmt.Fprintf(&b, "  %d review row(s) of ids the input does not have (deleted, or outside --where/--query), not applied: %s%s\n",
			rep.Outside, strings.Join(rep.OutsideIDs, ", "), more)
	}
	if len(rep.ExtraColumns) > 0 {
		fmt.Fprintf(&b, "  ignored the review's column(s) the input does not have: %s\n", strings.Join(rep.ExtraColumns, ", "))
	}
	if len(rep.MissingColumns) > 0 {
		fmt.Fprintf(&b, "  the review lacks input column(s) %s: the input's cells are written\n", strings.Join(rep.MissingColumns, ", "))
	}
	if rep.EditedCells > 0 {
		fmt.Fprintf(&b, "  WARNING      %d review cell(s) outside the address differ from the input; the input's cells are written (edit the input to change them):\n", rep.EditedCells)
		for _, c := range rep.Edited {
			fmt.Fprintf(&b, "    %s, column %q: %q in the review, %q in the input\n", rowName(c.Row, c.ID), c.Column, c.Review, c.Input)
		}
		if n := rep.EditedCells - int64(len(rep.Edited)); n > 0 {
			fmt.Fprintf(&b, "    ... and %d more\n", n)
		}
	}
	if rep.UnknownCountry > 0 {
		fmt.Fprintf(&b, "  %d row(s) have a country apply cannot write as an ISO code: unresolved (decide edit with edit_country)\n", rep.UnknownCountry)
	}
	if rep.NoServiceAddress > 0 {
		fmt.Fprintf(&b, "  %d row(s) decided accept have no address the service verified: unresolved (decide keep or edit)\n", rep.NoServiceAddress)
	}
	if n := rep.Sources[SourceUnresolved]; n > 0 {
		rows := make([]string, len(rep.UnresolvedRows))
		for i, r := range rep.UnresolvedRows {
			rows[i] = strconv.Itoa(r)
		}
		more := ""
		if int64(len(rows)) < n {
			more = ", ..."
		}
		what := "row(s)"
		if len(rep.UnresolvedIDs) > 0 {
			rows, what = rep.UnresolvedIDs, "row(s), ids"
		}
		fmt.Fprintf(&b, "  UNRESOLVED   %d %s: %s%s (final_source = unresolved, no final address)\n", n, what, strings.Join(rows, ", "), more)
		for _, u := range rep.Unresolved {
			if u.Reason == ReasonUndecided {
				continue // the counts above say how many; the list is of rows to look at
			}
			fmt.Fprintf(&b, "    %s: %s\n", rowName(u.Row, u.ID), u.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rowName names a row for a person: by its id when it has one.
func rowName(row int, id string) string {
	if id != "" {
		return "id " + id
	}
	return "row " + strconv.Itoa(row)
}
