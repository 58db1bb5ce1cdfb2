package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/refimport"
)

// cmdReference is 'addrclean reference import'.
func cmdReference(ctx context.Context, args []string, s streams) error {
	fs := cliflag.New("reference", referenceUsage, s.err)
	var from, country string
	fs.StringVar(&from, "from", "", "source format: paf or openaddresses (required)")
	fs.StringVar(&country, "country", "", "country of an OpenAddresses file: ISO `CODE` or name")
	pos, err := cliflag.Interspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 3 || pos[0] != "import" {
		fs.Usage()
		return usageErrorf("reference: want 'reference import --from FORMAT IN OUT.csv'")
	}
	in, out := pos[1], pos[2]
	if out == "-" || out == "" {
		return usageErrorf("reference import: OUT must be a file")
	}
	if err := checkPaths(pathRead("IN", in), pathWritten("OUT", out)); err != nil {
		return err
	}
	var conv func(context.Context, io.Reader, io.Writer) (refimport.Stats, error)
	switch strings.ToLower(from) {
	case "paf":
		conv = refimport.PAF
	case "openaddresses", "oa":
		if country == "" && in != "-" {
			country = filepath.Base(filepath.Dir(in)) // OpenAddresses lays files out as cc/...
		}
		if _, err := gazetteer.ReferenceCountry(country, ""); err != nil || country == "" {
			return usageErrorf("reference import --from openaddresses needs --country CODE (got %q)", country)
		}
		conv = func(ctx context.Context, r io.Reader, w io.Writer) (refimport.Stats, error) {
			return refimport.OpenAddresses(ctx, r, w, country)
		}
	default:
		return usageErrorf("reference import: --from %q: want paf or openaddresses", from)
	}
	var src io.Reader = s.in
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return withCode(exitFatal, fmt.Errorf("reference import: %w", err))
		}
		defer f.Close()
		src = f
	}
	st, err := refimport.WriteFile(ctx, out, func(w io.Writer) (refimport.Stats, error) { return conv(ctx, src, w) })
	if err != nil {
		return loadError(ctx, fmt.Errorf("reference import: %w", err))
	}
	fmt.Fprintf(s.err, "addrclean: %s: %s\n", out, st)
	return nil
}

// loadError gives err the exit code of a load that ctx ended, or the
// fatal one.
func loadError(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return withCode(exitInterrupted, err)
	}
	return withCode(exitFatal, err)
}
