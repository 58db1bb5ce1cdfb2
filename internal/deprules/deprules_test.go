package deprules

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/addrclean/addrclean/"

// TestLeavesStayLeaves: the shared types stay in leaves, so that writers
// need not import readers nor the report the pipeline. It reads the import
// clauses of the module's packages with go/build (no go command, no
// network; about a hundred files' headers), following only the module's
// own packages: nothing outside the module can import them back.
func TestLeavesStayLeaves(t *testing.T) {
	root := moduleRoot(t)
	for _, tt := range []struct {
		pkg string
		// must not be reached; "" means no package of the module at all.
		forbidden []string
	}{
		{pkg: "record", forbidden: []string{""}},
		{pkg: "runstats", forbidden: []string{""}},
		{pkg: "writers", forbidden: []string{"readers", "pipeline"}},
		{pkg: "report", forbidden: []string{"pipeline"}},
		{pkg: "estimate", forbidden: []string{"pipeline"}},
	} {
		t.Run(tt.pkg, func(t *testing.T) {
			via := deps(t, root, tt.pkg)
			for dep := range via {
				if dep == tt.pkg {
					continue
				}
				if slices.Contains(tt.forbidden, "") || slices.Contains(tt.forbidden, dep) {
					t.Errorf("%s imports %s: %s", tt.pkg, dep, chain(via, tt.pkg, dep))
				}
			}
		})
	}
}

// deps returns the module's packages that pkg (relative to the module,
// "writers") imports directly or not, each mapped to the package that
// imports it on a shortest path from pkg. Test files are not followed: a
// test may import what the package may not.
func deps(t *testing.T, root, pkg string) map[string]string {
	t.Helper()
	via := map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		p, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(queue[0])), build.ImportComment)
		if err != nil {
			t.Fatalf("read package %s: %v", queue[0], err)
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if _, seen := via[rel]; !seen {
				via[rel] = queue[0]
				queue = append(queue, rel)
			}
		}
	}
	return via
}

// chain spells the import path from pkg to dep: "report -> estimate -> pipeline".
func chain(via map[string]string, pkg, dep string) string {
	path := []string{dep}
	for p := via[dep]; p != ""; p = via[p] {
		path = append(path, p)
	}
	slices.Reverse(path)
	return strings.Join(path, " -> ")
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
