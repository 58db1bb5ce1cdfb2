package main

import (
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/table"
)

// checkPaths refuses a command line that would write a file over one it
// reads, or two outputs into one file (exit 2, naming both). Every command
// that writes a file calls it with the table of all its paths, before it
// reads, opens or pays for anything.
func checkPaths(uses ...samefile.Use) error {
	if err := samefile.Check(uses...); err != nil {
		return withCode(exitUsage, err)
	}
	return nil
}

// pathRead, pathWritten and pathDatabase are the uses of checkPaths, by flag.
func pathRead(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Read}
}
func pathWritten(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Write}
}

// pathDatabase is the SQLite file of a database URL (no use for PostgreSQL,
// whose files are the server's): read, or with tables written in it.
func pathDatabase(flag string, u *table.URL, written bool) samefile.Use {
	if u == nil || u.Scheme != "sqlite" {
		return samefile.Use{}
	}
	role := samefile.ReadDatabase
	if written {
		role = samefile.WriteDatabase
	}
	return samefile.Use{Name: flag, Path: u.Path, Role: role}
}

// sameDatabase reports whether two database URLs name one database: one
// SQLite file however it is spelt (sqlite:crm.db, sqlite:./crm.db, a link),
// or one PostgreSQL URL once its spelling is normalised.
func sameDatabase(a, b *table.URL) bool {
	if a.Scheme == "sqlite" && b.Scheme == "sqlite" {
		return samefile.Same(a.Path, b.Path)
	}
	return a.Display == b.Display
}

// runPaths are the files of 'addrclean run' with outputs out and review:
// what it reads first, then the cache it reads and writes, then what it
// writes. The journal is listed unless the run can keep none.
func (o *runOptions) runPaths(out, review string) []samefile.Use {
	uses := []samefile.Use{
		pathRead("INPUT", o.input),
		pathRead("--reference", o.reference),
		pathRead("--api-key-file", o.apiKeyFile),
		{Name: "--cache", Path: o.cache, Role: samefile.ReadWrite},
	}
	if table.IsURL(o.cache) {
		// A database's tables; an SQLite one's file is checked as a path.
		uses[3].Path = ""
		if u, err := table.ParseURL(o.cache); err == nil && u.Scheme == "sqlite" {
			uses[3].Path = u.Path
		}
	}
	if o.isTableSource() {
		uses[0] = pathDatabase("INPUT", o.tr.src, false)
	}
	if o.tr.hasOutputs() {
		flag := "--out-db"
		if o.tables.outDB == "" {
			flag = "INPUT" // the tables go to the input's database
		}
		uses = append(uses, pathDatabase(flag, o.tr.out, true))
	}
	uses = append(uses, pathWritten("--out", out), pathWritten("--review", review), pathWritten("--summary", o.summary), pathWritten("--report", o.report))
	if o.policy.MayKeep() {
		uses = append(uses, pathWritten("the journal", o.journalPathFor(out, review)))
	}
	return uses
}

// paths are the files of 'addrclean apply': the enriched and review files
// it reads, or the database of tables u (written with --final-table), and
// the final file.
func (o applyOptions) paths(u *table.URL) []samefile.Use {
	if u != nil {
		return []samefile.Use{pathDatabase("DBURL", u, o.final != ""), pathWritten("--out", o.out)}
	}
	return []samefile.Use{pathRead("--enriched", o.enriched), pathRead("--review", o.review), pathWritten("--out", o.out)}
}

// reportPaths are the files of 'addrclean report': the enriched file (or
// the database of the out-table) and the summary it reads, the page it
// writes.
func reportPaths(enriched, summary, out string) []samefile.Use {
	in := pathRead("ENRICHED", enriched)
	if table.IsURL(enriched) {
		u, _ := table.ParseURL(enriched) // nil when malformed: reading it says why
		in = pathDatabase("DBURL", u, false)
	}
	return []samefile.Use{in, pathRead("--summary", summary), pathWritten("--out", out)}
}
