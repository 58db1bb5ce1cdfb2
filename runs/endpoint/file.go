package endpoint

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

// fileKind is every name no registered kind claims: a CSV, TSV or XLSX
// file, or - for CSV on stdin.
var fileKind = Kind{Name: "file", Claims: func(string) bool { return true }, Plan: planFile, Readback: planFileReadback, Apply: planFileApply}

// fileSource is a file INPUT, or - for stdin.
type fileSource struct {
	path string
	r    readers.Reader
}

func planFile(s Spec) (Source, error) {
	for _, f := range []struct{ name, v string }{{"--table", s.Table}, {"--query", s.Query}, {"--where", s.Where}} {
		if f.v != "" {
			return nil, usagef("%s reads from a database: INPUT must then be a DBURL (postgres://user@host/db or sqlite:PATH)", f.name)
		}
	}
	return &fileSource{path: s.Input}, nil
}

func (f *fileSource) Info() Info {
	return Info{Name: f.path, Stdin: f.path == "-", Uses: []samefile.Use{{Name: "INPUT", Path: f.path, Role: samefile.Read}}, Key: f.path}
}

// Check refuses an extension the readers cannot read: the first thing to
// get right, since a complaint about the output name derived from an .xls
// input would be the wrong one.
func (f *fileSource) Check() error {
	if err := readers.CheckPath(f.path); err != nil {
		return usage(err)
	}
	return nil
}

// Outputs defaults to <input-stem>.cleaned.<ext> and
// <input-stem>.review.<ext> beside the input.
func (f *fileSource) Outputs(out, review string) (string, string, error) {
	if f.path == "-" && (out == "" || review == "") {
		return "", "", usagef("reading stdin: pass -o PATH (or -o - for stdout) and --review PATH")
	}
	ext := filepath.Ext(f.path)
	stem := strings.TrimSuffix(f.path, ext)
	if out == "" {
		out = stem + ".cleaned" + outputExt(ext)
	}
	if review == "" {
		review = stem + ".review" + outputExt(ext)
	}
	return out, review, nil
}

// outputExt is the extension of the default outputs for an input: the same
// format, spelled as the writers know it.
func outputExt(inputExt string) string {
	switch strings.ToLower(inputExt) {
	case ".xlsm":
		return ".xlsx" // a macro workbook's outputs carry no macros
	case ".tab":
		return ".tsv"
	}
	return inputExt
}

// Identity is the file's content: a resumed run never mixes the results of
// two versions of a file.
func (f *fileSource) Identity(ctx context.Context) (journal.Input, map[string]string, error) {
	in, err := hashInput(ctx, f.path)
	return in, nil, err
}

func (f *fileSource) Open(ctx context.Context, opts readers.Options, _ readers.MappingSpec, _ zerolog.Logger) (readers.Reader, error) {
	r, err := readers.Open(ctx, f.path, opts)
	if err != nil {
		return nil, InputError(err)
	}
	f.r = r
	return r, nil
}

func (f *fileSource) ReadError(_ context.Context, err error) error { return InputError(err) }

func (f *fileSource) Close() error {
	if f.r == nil {
		return nil
	}
	return f.r.Close()
}

// fileSinks are the enriched and review files (or - for the enriched
// output on stdout).
type fileSinks struct{ out, review string }

// check refuses an output whose format the writers do not know, a review
// on stdout, or one in a directory that does not exist (the writer would
// fail later, on a hidden temporary file in it).
func (s fileSinks) check() error {
	for _, p := range []struct{ flag, path string }{{"--out", s.out}, {"--review", s.review}} {
		if p.path == "" {
			continue
		}
		if _, err := writers.FormatFromPath(p.path); err != nil {
			return usagef("%s %s: %w", p.flag, p.path, err)
		}
	}
	if s.review == "-" {
		return usagef("--review cannot be stdout; give it a path")
	}
	return nil
}
