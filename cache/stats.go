package cache

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteTable writes st for people ('addrclean cache stats'): the file, then
// a table of the namespaces with their entries older than ttl.
func (st Stats) WriteTable(w io.Writer, ttl time.Duration) error {
	fmt.Fprintf(w, "cache %s: %s, %d entries\n", st.Path, byteSize(st.Size), st.Entries)
	if st.Damaged > 0 {
		fmt.Fprintf(w, "%d damaged: misses, verified again; 'addrclean cache prune' removes them\n", st.Damaged)
	}
	if len(st.Namespaces) == 0 {
		_, err := fmt.Fprintln(w, "no namespaces")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAMESPACE\tENTRIES\tOLDER THAN %s\tDAMAGED\tOLDEST\tNEWEST\n", ttl)
	for _, ns := range st.Namespaces {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", ns.Label, ns.Entries, ns.Expired, ns.Damaged, stamp(ns.Oldest), stamp(ns.Newest))
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
